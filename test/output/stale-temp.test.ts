import { readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive, removeStaleTempFiles, STALE_TEMP_AGE_MS } from '../../src/output/stale-temp.js';
import { deadPid, livePid } from '../helpers/pids.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('stale-temp-');
const children: { kill(): boolean }[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

describe('removeStaleTempFiles', () => {
  it('removes temp files whose process is gone or that are very old; keeps live, own and other files', async () => {
    const dir = await tempDir();
    const live = await livePid();
    children.push(live);
    const gone = await deadPid();
    const names = {
      gone: `.2026-11-20.csv.${gone}.0badc0de.tmp`,
      live: `.2026-11-20.csv.${live.pid}.0badc0df.tmp`,
      liveButOld: `.2026-11-19.csv.${live.pid}.0badc0e0.tmp`,
      own: `.2026-11-18.csv.${process.pid}.0badc0e1.tmp`,
      data: '2026-11-20.csv',
      other: '.notes.tmp',
    };
    for (const name of Object.values(names)) await writeFile(join(dir, name), 'x');
    const old = new Date(Date.now() - STALE_TEMP_AGE_MS - 60_000);
    await utimes(join(dir, names.liveButOld), old, old);

    const removed = await removeStaleTempFiles([dir, join(dir, 'missing-folder')]);
    expect(removed.map((entry) => entry.path).sort()).toEqual([join(dir, names.gone), join(dir, names.liveButOld)].sort());
    expect(removed.find((entry) => entry.path.endsWith(names.gone))).toMatchObject({ pid: gone, reason: 'gone' });
    expect(removed.find((entry) => entry.path.endsWith(names.liveButOld))).toMatchObject({ pid: live.pid, reason: 'old' });
    expect((await readdir(dir)).sort()).toEqual([names.data, names.live, names.other, names.own].sort());
  });

  it('tells live processes from gone ones', async () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(await deadPid())).toBe(false);
  });
});
