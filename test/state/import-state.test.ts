import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATE_VERSION } from '../../src/state/storage/versions/current.js';
import { addDays } from '../../src/window/days.js';
import { useTempDirs } from '../helpers/tmp.js';
import { loadExistingStateFile, loadStateFile } from '../helpers/state-file.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const tempDir = useTempDirs('state-');
const METRICS = METRIC_NAMES;
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
  it("starts empty when there is no file, and persists complete days as ranges with the latest day's stores", async () => {
    const state = await loadStateFile(path, OPTIONS);
    expect(state.lastCompleteDay('traffic')).toBeUndefined();
    await state.markComplete('traffic', '2026-11-18', ['S002', 'S001']);
    await state.markComplete('traffic', '2026-11-19', ['S003', 'S001', 'S002']);
    await state.markComplete('traffic', '2026-11-15', ['S001']);
    const reloaded = await loadStateFile(path, OPTIONS);
    expect(reloaded.lastCompleteDay('traffic')).toBe('2026-11-19');
    expect(reloaded.coverage('traffic').complete).toEqual([
      ['2026-11-15', '2026-11-15'],
      ['2026-11-18', '2026-11-19'],
    ]);
    // An older day completing later does not change the expectation.
    expect(reloaded.storeCount('traffic')).toBe(3);
    expect(reloaded.storeCodes('traffic')).toEqual(['S001', 'S002', 'S003']);
    const file = await onDisk();
    expect(file.version).toBe(STATE_VERSION);
    expect(STATE_VERSION).toBe(5);
    expect(Object.keys(file.storeSets)).toHaveLength(1);
  });

  it('a final day stays final: a later judgement of it changes nothing', async () => {
    const state = await loadStateFile(path, OPTIONS);
    await state.markComplete('traffic', '2026-11-10', ['S001']);
    expect(await state.markPending('traffic', '2026-11-10', { reason: 'not-published', stores: 0 })).toBe(false);
    await state.accept('traffic', ['2026-11-11']);
    expect(await state.markPending('traffic', '2026-11-11', { reason: 'failed' })).toBe(false);
    expect(state.isFinal('traffic', '2026-11-10')).toBe(true);
    expect(state.isFinal('traffic', '2026-11-11')).toBe(true);
    expect(state.coverage('traffic').pending).toEqual([]);
  });

  it('each day has one status: pending, given up, accepted or complete, and reopen makes any of them pending', async () => {
    const state = await loadStateFile(path, OPTIONS);
    await state.markComplete('traffic', '2026-11-17', ['S001']);
    expect(await state.markPending('traffic', '2026-11-18', { reason: 'partly-published', missingStores: 1, stores: 0 })).toBe(true);
    expect(await state.markPending('traffic', '2026-11-19', { reason: 'not-published', stores: 0 })).toBe(true);
    await state.markGivenUp('traffic', '2026-11-19');
    expect((await loadStateFile(path, OPTIONS)).coverage('traffic')).toEqual({
      complete: [['2026-11-17', '2026-11-17']],
      accepted: [],
      givenUp: [['2026-11-19', '2026-11-19']],
      pending: [{ day: '2026-11-18', status: { reason: 'partly-published', missingStores: 1, stores: 0 } }],
    });
    await state.accept('traffic', ['2026-11-17', '2026-11-18', '2026-11-19']);
    expect(state.coverage('traffic')).toMatchObject({
      complete: [['2026-11-17', '2026-11-17']],
      accepted: [['2026-11-18', '2026-11-19']],
      givenUp: [],
      pending: [],
    });
    await state.reopen('traffic', ['2026-11-17', '2026-11-19']);
    expect(state.coverage('traffic')).toMatchObject({
      complete: [],
      accepted: [['2026-11-18', '2026-11-18']],
      pending: [
        { day: '2026-11-17', status: { reason: 'reopened' } },
        { day: '2026-11-19', status: { reason: 'reopened' } },
      ],
    });
  });

  it('days a run is asked for are pending (asked) until judged; a pending day keeps its reason', async () => {
    const state = await loadStateFile(path, OPTIONS);
    await state.markComplete('traffic', '2026-11-17', ['S001']);
    await state.markPending('traffic', '2026-11-18', { reason: 'not-published', stores: 0 });
    await state.markAsked(['2026-11-17', '2026-11-18', '2026-11-19'].map((day) => ({ key: 'traffic', day })));
    expect(state.coverage('traffic').pending).toEqual([
      { day: '2026-11-18', status: { reason: 'not-published', stores: 0 } },
      { day: '2026-11-19', status: { reason: 'asked' } },
    ]);
  });

  it("keeps a complete day's profile, one line a day, for a year; a reopened day has none", async () => {
    const days = Array.from({ length: 400 }, (_, index) => addDays('2026-11-01', index));
    const profiles = Object.fromEntries(days.slice(0, -1).map((day, index) => [day, [12, 3, 36, 100 + index]]));
    await writeFile(
      path,
      JSON.stringify({ version: 5, metrics: { traffic: { complete: [[days[0], days.at(-2)]], profiles } }, storeSets: {} }),
    );
    const state = await loadStateFile(path, { ...OPTIONS, now: new Date('2027-12-31T12:00:00Z') });
    expect(state.completeProfiles('traffic').size).toBe(399);
    await state.markComplete('traffic', days.at(-1)!, ['S001'], [12, 3, 36, 499]);
    const kept = state.completeProfiles('traffic');
    expect(kept.size).toBe(366);
    expect([...kept.keys()][0]).toBe(days.at(-366));
    expect(kept.get(days.at(-1)!)).toEqual([12, 3, 36, 499]);
    expect(await readFile(path, 'utf8')).toContain(`      "${days.at(-1)}": [12,3,36,499]\n`);
    await state.reopen('traffic', [days.at(-1)!]);
    expect(state.completeProfiles('traffic').size).toBe(365);
    // The profile it was final with is kept while it is pending: a correction of it is named one.
    expect(state.profileOf('traffic', days.at(-1)!)).toEqual([12, 3, 36, 499]);
  });

  it('records a verdict in one place; a held correction takes a complete day back, keeping the profile it was final with', async () => {
    const state = await loadStateFile(path, OPTIONS);
    const figures = { codes: ['S1', 'S2'], values: Float64Array.from([10, 20]), suspect: false };
    await state.record('traffic', '2026-11-18', { kind: 'complete', stores: ['S1', 'S2'], profile: [2, 2, 4, 30], figures });
    await state.record('traffic', '2026-11-18', { kind: 'kept' });
    expect(state.isFinal('traffic', '2026-11-18')).toBe(true);
    const held = { reason: 'suspect', measure: 'sum', value: 10, stores: 2 } as const;
    const zeroed = { ...figures, values: Float64Array.from([10, 0]), suspect: true, found: ['S2'] };
    await state.record('traffic', '2026-11-18', { kind: 'pending', status: held, figures: zeroed, correction: true });
    const reloaded = await loadStateFile(path, OPTIONS);
    expect(reloaded.isFinal('traffic', '2026-11-18')).toBe(false);
    expect(reloaded.pendingReason('traffic', '2026-11-18')).toBe('suspect');
    expect(reloaded.profileOf('traffic', '2026-11-18')).toEqual([2, 2, 4, 30]);
    expect(reloaded.completeProfiles('traffic')).toEqual(new Map());
    // Held again the next night, it is still a correction; the held figures are recorded, out of the history.
    await reloaded.record('traffic', '2026-11-18', { kind: 'pending', status: held, figures: zeroed });
    expect(reloaded.profileOf('traffic', '2026-11-18')).toEqual([2, 2, 4, 30]);
    expect(reloaded.recordedFigures('traffic')('2026-11-18')?.values[1]).toBe(0);
    expect(reloaded.storeHistory('traffic')('2026-11-18')).toBeUndefined();
    // Settled by the vendor's numbers: complete, with its new profile.
    await reloaded.record('traffic', '2026-11-18', { kind: 'complete', stores: ['S1', 'S2'], profile: [2, 2, 4, 31], figures });
    expect(reloaded.completeProfiles('traffic')).toEqual(new Map([['2026-11-18', [2, 2, 4, 31]]]));
    // An accepted day is a person's word: a correction does not take it back.
    await reloaded.accept('traffic', ['2026-11-17']);
    await reloaded.record('traffic', '2026-11-17', { kind: 'pending', status: held, correction: true });
    expect(reloaded.isFinal('traffic', '2026-11-17')).toBe(true);
  });

  it('records the last run', async () => {
    const state = await loadStateFile(path, OPTIONS);
    await state.recordRun({ time: '2026-11-21T02:30:05.000Z', command: 'all --catch-up', exitCode: 0, rows: { traffic: 12 } });
    expect((await loadStateFile(path, OPTIONS)).lastRun()).toEqual({
      time: '2026-11-21T02:30:05.000Z',
      command: 'all --catch-up',
      exitCode: 0,
      rows: { traffic: 12 },
    });
  });

  it('loadExisting (for status) refuses a missing file', async () => {
    await expect(loadExistingStateFile(path, OPTIONS)).rejects.toThrow(/no state file at .*\.area-metrics-state\.json/);
  });

  it('keeps the stores of a 20,000-store chain compact, once for metrics that share them', async () => {
    const codes = Array.from({ length: 20_000 }, (_, index) => `S${String(index + 1).padStart(5, '0')}`);
    const state = await loadStateFile(path, OPTIONS);
    for (const metric of METRICS) await state.markComplete(metric, '2026-11-20', codes);
    const size = (await stat(path)).size;
    // A plain JSON list of these codes alone is 180 kB; three of them 540 kB.
    expect(size).toBeLessThan(80_000);
    const reloaded = await loadStateFile(path, OPTIONS);
    expect(reloaded.storeCodes('avg-screen-time')).toEqual(codes);
    expect(Object.keys((await onDisk()).storeSets)).toHaveLength(1);
  });
});
