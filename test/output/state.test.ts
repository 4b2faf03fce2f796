import { lstat, lutimes, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { ImportState, stateKey, STATE_VERSION } from '../../src/output/state.js';
import { deadPid } from '../helpers/pids.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('state-');
const METRICS = ['unique-users', 'avg-screen-time', 'traffic'];
const NOW = new Date('2026-11-21T02:30:00Z');
const OPTIONS = { now: NOW, metricNames: METRICS };
let dir: string;
let path: string;
beforeEach(async () => {
  dir = await tempDir();
  path = join(dir, '.area-metrics-state.json');
});

async function onDisk(): Promise<{ version: number; metrics: Record<string, Record<string, unknown>>; storeSets: Record<string, string> }> {
  return JSON.parse(await readFile(path, 'utf8')) as never;
}

describe('ImportState', () => {
  it('starts empty when there is no file, and persists the last complete day with its stores', async () => {
    const state = await ImportState.load(path, OPTIONS);
    expect(state.lastCompleteDay('traffic')).toBeUndefined();
    expect(await state.markComplete('traffic', '2026-11-18', ['S002', 'S001'])).toBe(true);
    expect(await state.markComplete('traffic', '2026-11-19', ['S003', 'S001', 'S002'])).toBe(true);
    const reloaded = await ImportState.load(path, OPTIONS);
    expect(reloaded.lastCompleteDay('traffic')).toBe('2026-11-19');
    expect(reloaded.storeCount('traffic')).toBe(3);
    expect(reloaded.storeCodes('traffic')).toEqual(['S001', 'S002', 'S003']);
    const file = await onDisk();
    expect(file.version).toBe(STATE_VERSION);
    expect(file.metrics.traffic).toMatchObject({ lastCompleteDay: '2026-11-19', stores: 3 });
    // The set of the 18th is no longer referred to, so it is gone.
    expect(Object.keys(file.storeSets)).toHaveLength(1);
  });

  it('only advances one day at a time and never moves backwards', async () => {
    const state = await ImportState.load(path, OPTIONS);
    await state.markComplete('traffic', '2026-11-10', ['S001']);
    expect(await state.markComplete('traffic', '2026-11-12', ['S001'])).toBe(false);
    expect(await state.markComplete('traffic', '2026-11-05', ['S001'])).toBe(false);
    expect(await state.markComplete('traffic', '2026-11-10', [])).toBe(false);
    expect(state.lastCompleteDay('traffic')).toBe('2026-11-10');
    expect(state.storeCodes('traffic')).toEqual(['S001']);
  });

  it('keeps pending days after the last complete one, and drops them once they are complete', async () => {
    const state = await ImportState.load(path, OPTIONS);
    await state.markComplete('traffic', '2026-11-17', ['S001']);
    expect(await state.markPending('traffic', '2026-11-18', { reason: 'partial', missingStores: 1, stores: 0 })).toBe(true);
    expect(await state.markPending('traffic', '2026-11-19', { reason: 'not-published', stores: 0 })).toBe(true);
    expect(await state.markPending('traffic', '2026-11-17', { reason: 'not-over' })).toBe(false);
    expect((await ImportState.load(path, OPTIONS)).pending('traffic')).toEqual([
      { day: '2026-11-18', status: { reason: 'partial', missingStores: 1, stores: 0 } },
      { day: '2026-11-19', status: { reason: 'not-published', stores: 0 } },
    ]);
    await state.markComplete('traffic', '2026-11-18', ['S001']);
    expect(state.pending('traffic').map((entry) => entry.day)).toEqual(['2026-11-19']);
  });

  it('reads a version 1 file of the previous release and upgrades it on the next write', async () => {
    await writeFile(path, JSON.stringify({ version: 1, lastCompleteDay: { traffic: '2026-11-18', 'unique-users[store=S001]': '2026-11-17' } }));
    const state = await ImportState.load(path, OPTIONS);
    expect(state.lastCompleteDay('traffic')).toBe('2026-11-18');
    expect(state.lastCompleteDay('unique-users[store=S001]')).toBe('2026-11-17');
    expect(state.storeCodes('traffic')).toBeUndefined();
    await state.markComplete('traffic', '2026-11-19', ['S001']);
    const file = await onDisk();
    expect(file.version).toBe(2);
    expect(file.metrics['unique-users[store=S001]']).toEqual({ lastCompleteDay: '2026-11-17' });
    expect(file.metrics.traffic).toMatchObject({ lastCompleteDay: '2026-11-19', stores: 1 });
  });

  it.each([
    [{ lastCompleteDay: { traffic: '2026-02-30' } }, /traffic lastCompleteDay "2026-02-30" is not a valid day/],
    [{ version: 1, lastCompleteDay: { traffic: '2026-13-01' } }, /traffic lastCompleteDay "2026-13-01" is not a valid day/],
    [{ version: 1, lastCompleteDay: { traffic: '2099-01-01' } }, /traffic lastCompleteDay 2099-01-01 is in the future \(today is 2026-11-21 UTC\)/],
    // Today is not over, so it cannot be complete.
    [{ version: 1, lastCompleteDay: { traffic: '2026-11-21' } }, /lastCompleteDay 2026-11-21 is in the future/],
    [{ version: 1, lastCompleteDay: { trafic: '2026-11-01' } }, /unknown metric key "trafic"/],
    [{ version: 3, metrics: {} }, /has version 3, newer than this area-metrics reads \(2\); upgrade area-metrics/],
    [{ version: 2, metrics: { traffic: { lastCompleteDay: '2026-11-01', storeSet: 'abc' } }, storeSets: {} }, /names store set "abc", which is not in storeSets/],
    [{ version: 2, metrics: { traffic: { pending: { '2026-11-31': { reason: 'not-over' } } } }, storeSets: {} }, /pending day "2026-11-31" is not a valid day/],
    [{ version: 1, lastCompleteDay: { traffic: 'yesterday' } }, /"yesterday" is not a valid day/],
  ])('refuses %j with a usage error naming the file and the value', async (content, message) => {
    await writeFile(path, JSON.stringify(content));
    const error = await ImportState.load(path, OPTIONS).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).not.toContain('\n');
  });

  it('refuses a file that is not JSON or not a state file', async () => {
    await writeFile(path, 'not json');
    await expect(ImportState.load(path, OPTIONS)).rejects.toThrow(/not valid JSON; fix or delete it/);
    await writeFile(path, '{"hello": 1}');
    await expect(ImportState.load(path, OPTIONS)).rejects.toThrow(/is not an area-metrics state file/);
  });

  it('loadExisting (for status) refuses a missing file', async () => {
    await expect(ImportState.loadExisting(path, OPTIONS)).rejects.toThrow(/no state file at .*\.area-metrics-state\.json/);
  });

  it('keeps the stores of a 20,000-store chain compact, once for metrics that share them', async () => {
    const codes = Array.from({ length: 20_000 }, (_, index) => `S${String(index + 1).padStart(5, '0')}`);
    const state = await ImportState.load(path, OPTIONS);
    for (const metric of METRICS) await state.markComplete(metric, '2026-11-20', codes);
    const size = (await stat(path)).size;
    // A plain JSON list of these codes alone is 180 kB; three of them 540 kB.
    expect(size).toBeLessThan(80_000);
    const reloaded = await ImportState.load(path, OPTIONS);
    expect(reloaded.storeCodes('avg-screen-time')).toEqual(codes);
    expect(Object.keys((await onDisk()).storeSets)).toHaveLength(1);
  });

  it('two writers on one file keep each other\'s keys (read-merge-write under the lock)', async () => {
    const a = await ImportState.load(path, OPTIONS);
    const b = await ImportState.load(path, OPTIONS);
    const days = ['2026-11-10', '2026-11-11', '2026-11-12', '2026-11-13', '2026-11-14'];
    await Promise.all([
      (async () => {
        for (const day of days) await a.markComplete('traffic', day, ['S001']);
      })(),
      (async () => {
        for (const day of days) await b.markComplete('unique-users', day, ['S002']);
      })(),
    ]);
    const reloaded = await ImportState.load(path, OPTIONS);
    expect(reloaded.lastCompleteDay('traffic')).toBe('2026-11-14');
    expect(reloaded.lastCompleteDay('unique-users')).toBe('2026-11-14');
    await expect(lstat(`${path}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('takes over a lock left by a process that is gone', async () => {
    await symlink(String(await deadPid()), `${path}.lock`);
    const state = await ImportState.load(path, OPTIONS);
    expect(await state.markComplete('traffic', '2026-11-20', ['S001'])).toBe(true);
    await expect(lstat(`${path}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('waits for a live holder and takes over a lock older than a minute', async () => {
    const lock = `${path}.lock`;
    await symlink(String(process.pid), lock);
    const state = await ImportState.load(path, OPTIONS);
    let done = false;
    const marking = state.markComplete('traffic', '2026-11-20', ['S001']).then((changed) => {
      done = true;
      return changed;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(done).toBe(false);
    const old = new Date(Date.now() - 120_000);
    await lutimes(lock, old, old);
    expect(await marking).toBe(true);
  });

  it('keys store-limited runs apart from whole runs', () => {
    expect(stateKey('traffic', [])).toBe('traffic');
    expect(stateKey('traffic', ['B', 'A'])).toBe('traffic[store=A,B]');
  });
});
