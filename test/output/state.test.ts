import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { ImportState, stateKey } from '../../src/output/state.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('state-');
let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});

describe('ImportState', () => {
  it('starts empty when there is no file, and persists what it records', async () => {
    const path = join(dir, '.area-metrics-state.json');
    const state = await ImportState.load(path);
    expect(state.lastCompleteDay('traffic')).toBeUndefined();
    expect(await state.markComplete('traffic', '2026-11-18')).toBe(true);
    expect(await state.markComplete('traffic', '2026-11-19')).toBe(true);
    const reloaded = await ImportState.load(path);
    expect(reloaded.lastCompleteDay('traffic')).toBe('2026-11-19');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ version: 1, lastCompleteDay: { traffic: '2026-11-19' } });
  });

  it('only advances one day at a time, so a gap is still caught up later', async () => {
    const state = await ImportState.load(join(dir, 's.json'));
    await state.markComplete('traffic', '2026-11-10');
    expect(await state.markComplete('traffic', '2026-11-12')).toBe(false);
    expect(await state.markComplete('traffic', '2026-11-05')).toBe(false);
    expect(state.lastCompleteDay('traffic')).toBe('2026-11-10');
  });

  it('refuses a damaged state file with a usage error instead of guessing', async () => {
    const path = join(dir, 's.json');
    await writeFile(path, '{"version": 1, "lastCompleteDay": {"traffic": "yesterday"}}');
    await expect(ImportState.load(path)).rejects.toThrow(UsageError);
    await writeFile(path, 'not json');
    await expect(ImportState.load(path)).rejects.toThrow(/not valid JSON; fix or delete it/);
  });

  it('keys store-limited runs apart from whole runs', () => {
    expect(stateKey('traffic', [])).toBe('traffic');
    expect(stateKey('traffic', ['B', 'A'])).toBe('traffic[store=A,B]');
  });
});
