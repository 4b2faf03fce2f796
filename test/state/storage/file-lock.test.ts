import { lstat, lutimes, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { deadPid } from '../../helpers/pids.js';
import { useTempDirs } from '../../helpers/tmp.js';
import { METRIC_NAMES } from '../../../src/metrics/names.js';
import { loadStateFile } from '../../helpers/state-file.js';

const tempDir = useTempDirs('state-lock-');
const OPTIONS = { now: new Date('2026-11-21T02:30:00Z'), metricNames: METRIC_NAMES };
let path: string;
beforeEach(async () => {
  path = join(await tempDir(), '.area-metrics-state.json');
});

describe('the state file under its lock', () => {
  it("two writers on one file keep each other's keys (read-merge-write under the lock)", async () => {
    const a = await loadStateFile(path, OPTIONS);
    const b = await loadStateFile(path, OPTIONS);
    const days = ['2026-11-10', '2026-11-11', '2026-11-12', '2026-11-13', '2026-11-14'];
    await Promise.all([
      (async () => {
        for (const day of days) await a.markComplete('traffic', day, ['S001']);
      })(),
      (async () => {
        for (const day of days) await b.markComplete('unique-users', day, ['S002']);
      })(),
    ]);
    const reloaded = await loadStateFile(path, OPTIONS);
    expect(reloaded.lastCompleteDay('traffic')).toBe('2026-11-14');
    expect(reloaded.lastCompleteDay('unique-users')).toBe('2026-11-14');
    await expect(lstat(`${path}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('takes over a lock left by a process that is gone', async () => {
    await symlink(String(await deadPid()), `${path}.lock`);
    const state = await loadStateFile(path, OPTIONS);
    await state.markComplete('traffic', '2026-11-20', ['S001']);
    expect(state.lastCompleteDay('traffic')).toBe('2026-11-20');
    await expect(lstat(`${path}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('waits for a live holder and takes over a lock older than a minute', async () => {
    const lock = `${path}.lock`;
    await symlink(String(process.pid), lock);
    const state = await loadStateFile(path, OPTIONS);
    let done = false;
    const marking = state.markComplete('traffic', '2026-11-20', ['S001']).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300)); // a negative check: it does not take a live holder's lock
    expect(done).toBe(false);
    const old = new Date(Date.now() - 120_000);
    await lutimes(lock, old, old);
    await marking;
    expect(state.lastCompleteDay('traffic')).toBe('2026-11-20');
  });
});
