import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import type { UnitOutcome } from '../../src/import/pipeline.js';
import type { Unit } from '../../src/metrics/unit.js';
import { DayCompletion, type DayRules } from '../../src/import/day-completion.js';
import type { MeasureSums } from '../../src/metrics/measure.js';
import { STATE_FILE_NAME } from '../../src/destination/spec.js';
import type { DayMode } from '../../src/window/day-mode.js';
import { addDays } from '../../src/window/days.js';
import { useTempDirs } from '../helpers/tmp.js';
import { loadStateFile } from '../helpers/state-file.js';

const tempDir = useTempDirs('day-completion-');

/** A complete unit whose results are the stores at these local midnights, with the metric's figures. */
function outcome(
  unit: Unit,
  midnights: readonly string[],
  measure: MeasureSums = { value: midnights.length, weight: midnights.length, nonZero: midnights.length },
): UnitOutcome {
  const storeCodes = midnights.map((_, index) => `S${index}`);
  return {
    unit,
    ok: true,
    destination: 'test',
    changed: true,
    data: {
      unit,
      count: midnights.length,
      pages: 1,
      rowCount: midnights.length * 2,
      header: undefined,
      pieces: [],
      rejected: [],
      warnings: [],
      storeCodes,
      dropped: 0,
      attempts: 1,
      requests: 1,
      throttled: 0,
      measure,
      // Stores that add nothing of their own are never judged: these days are judged by their total alone.
      storeSums: storeCodes.map(() => ({ value: 0, weight: 0, nonZero: 0 })),
    },
  };
}

const RULES = { storeCodes: [], settleDays: 3, giveUpDays: 14, onSuspect: 'hold' } as const satisfies Partial<DayRules>;

async function judge(mode: DayMode, day: string, now: string, midnights: readonly string[]) {
  const state = await loadStateFile(join(await tempDir(), STATE_FILE_NAME), { now: new Date(now), metricNames: ['traffic'], mode });
  const unit: Unit = { metric: METRICS.traffic, day, ...(mode === 'local' ? { mode } : {}) };
  const days = new DayCompletion([unit], { ...RULES, now: new Date(now), mode }, state);
  const notes = await days.record(outcome(unit, midnights));
  return { coverage: state.coverage('traffic'), notes };
}

describe('DayCompletion: a day is over only when its local days are', () => {
  it('a UTC day at 18:28 UTC the next day is pending not-over, with a note saying until when', async () => {
    // +05:45's local 2026-11-23 began at 18:15Z on the 22nd: within 25 h at 18:28Z on the 23rd. -05:00's began the 22nd.
    const { coverage, notes } = await judge('utc', '2026-11-22', '2026-11-23T18:28:00Z', [
      '2026-11-23T00:00:00+05:45',
      '2026-11-22T00:00:00-05:00',
    ]);
    expect(coverage.complete).toEqual([]);
    expect(coverage.pending).toEqual([{ day: '2026-11-22', status: { reason: 'not-over', stores: 2 } }]);
    expect(notes).toEqual([{ metric: 'traffic', day: '2026-11-22', kind: 'not-over', until: '2026-11-24T00:59:59Z', results: 2 }]);
  });

  it('the same day is complete once it is over, with no warning', async () => {
    const { coverage, notes } = await judge('utc', '2026-11-22', '2026-11-24T00:59:59Z', [
      '2026-11-23T00:00:00+05:45',
      '2026-11-22T00:00:00-05:00',
    ]);
    expect(coverage.complete).toEqual([['2026-11-22', '2026-11-22']]);
    expect(notes).toEqual([]);
  });

  it('a local day is not over until 13:00 UTC the next day, even with every store served', async () => {
    const midnights = ['2026-11-22T00:00:00+13:00', '2026-11-22T00:00:00-11:00'];
    const early = await judge('local', '2026-11-22', '2026-11-23T12:59:59Z', midnights);
    expect(early.coverage.pending).toEqual([{ day: '2026-11-22', status: { reason: 'not-over', stores: 2 } }]);
    expect(early.notes).toEqual([expect.objectContaining({ kind: 'not-over', until: '2026-11-23T13:00:00Z' })]);
    const over = await judge('local', '2026-11-22', '2026-11-23T13:00:00Z', midnights);
    expect(over.coverage.complete).toEqual([['2026-11-22', '2026-11-22']]);
  });
});

describe('DayCompletion: numbers that look wrong', () => {
  const NOW = '2026-11-30T12:00:00Z';
  const unitOf = (day: string): Unit => ({ metric: METRICS['unique-users'], day });
  /** Unique users of 2 stores, each with the given sum. */
  const usersDay = (day: string, users: number): UnitOutcome =>
    outcome(unitOf(day), [`${day}T00:00:00+01:00`, `${day}T00:00:00+02:00`], { value: users, weight: 4, nonZero: users > 0 ? 4 : 0 });

  /** Imports the days with these unique-user sums (one unit each), in order, and returns the state and the notes. */
  async function importDays(sums: readonly [string, number][], onSuspect: DayRules['onSuspect'] = 'hold', path?: string) {
    const statePath = path ?? join(await tempDir(), STATE_FILE_NAME);
    const state = await loadStateFile(statePath, { now: new Date(NOW), metricNames: ['unique-users'] });
    const units = sums.map(([day]) => unitOf(day));
    const days = new DayCompletion(units, { ...RULES, onSuspect, now: new Date(NOW), mode: 'utc' }, state);
    const notes = [];
    for (const [day, users] of sums) notes.push(...(await days.record(usersDay(day, users))));
    return { state, notes, statePath, days };
  }
  const month = (count: number, users = (index: number) => 1000 + 10 * index): [string, number][] =>
    Array.from({ length: count }, (_, index) => [addDays('2026-11-01', index), users(index)]);

  it("a complete day keeps its profile: results, stores, rows and the metric's total", async () => {
    const { state } = await importDays([['2026-11-01', 1234]]);
    expect(state.completeProfiles('unique-users')).toEqual(new Map([['2026-11-01', [2, 2, 4, 1234]]]));
  });

  it('a drop below a third of the median of the days before is held pending as suspect, naming measure, value and median', async () => {
    const { state, notes } = await importDays([...month(10), ['2026-11-11', 300]]);
    expect(state.coverage('unique-users').pending).toEqual([
      { day: '2026-11-11', status: { reason: 'suspect', measure: 'sum of unique_users', value: 300, median: 1045, stores: 2 } },
    ]);
    expect(notes).toEqual([
      {
        metric: 'unique-users',
        day: '2026-11-11',
        kind: 'suspect',
        held: true,
        suspicion: { measure: 'sum of unique_users', value: 300, median: 1045 },
      },
    ]);
    expect(state.completeProfiles('unique-users').has('2026-11-11')).toBe(false);
  });

  it('a day above three times the median is suspect too; one within is not', async () => {
    const high = await importDays([...month(10), ['2026-11-11', 3200]]);
    expect(high.state.coverage('unique-users').pending).toMatchObject([{ day: '2026-11-11', status: { reason: 'suspect', value: 3200 } }]);
    const fine = await importDays([...month(10), ['2026-11-11', 3100], ['2026-11-12', 400]]);
    expect(fine.state.coverage('unique-users').pending).toEqual([]);
    expect(fine.notes).toEqual([]);
  });

  it('too little history is not judged: fewer than 7 complete days among the 28 before', async () => {
    const { state, notes } = await importDays([...month(6), ['2026-11-07', 10]]);
    expect(state.coverage('unique-users').pending).toEqual([]);
    expect(notes).toEqual([]);
  });

  it('every value zero is suspect even without history', async () => {
    const { state, notes } = await importDays([['2026-11-01', 0]]);
    expect(state.coverage('unique-users').pending).toEqual([
      { day: '2026-11-01', status: { reason: 'suspect', measure: 'sum of unique_users', value: 0, allZero: true, stores: 2 } },
    ]);
    expect(notes).toEqual([
      expect.objectContaining({ kind: 'suspect', held: true, suspicion: { measure: 'sum of unique_users', value: 0, allZero: true } }),
    ]);
  });

  it('--on-suspect warn records the day complete with the warning; off does not judge', async () => {
    const warned = await importDays([...month(10), ['2026-11-11', 300]], 'warn');
    expect(warned.state.coverage('unique-users').pending).toEqual([]);
    expect(warned.state.completeProfiles('unique-users').get('2026-11-11')).toEqual([2, 2, 4, 300]);
    expect(warned.notes).toEqual([
      expect.objectContaining({ kind: 'suspect', held: false, suspicion: expect.objectContaining({ value: 300 }) }),
    ]);
    const off = await importDays([...month(10), ['2026-11-11', 0]], 'off');
    expect(off.state.coverage('unique-users').pending).toEqual([]);
    expect(off.notes).toEqual([]);
  });

  it("marks the run's days asked before any request; those it never judged are interrupted when it ends", async () => {
    const statePath = join(await tempDir(), STATE_FILE_NAME);
    const state = await loadStateFile(statePath, { now: new Date(NOW), metricNames: ['unique-users'] });
    const days = new DayCompletion([unitOf('2026-11-01'), unitOf('2026-11-02')], { ...RULES, now: new Date(NOW), mode: 'utc' }, state);
    await days.markAsked();
    expect(state.coverage('unique-users').pending.map(({ status }) => status.reason)).toEqual(['asked', 'asked']);
    await days.record(usersDay('2026-11-01', 1000));
    await days.endRun();
    expect(state.isFinal('unique-users', '2026-11-01')).toBe(true);
    expect(state.coverage('unique-users').pending).toEqual([{ day: '2026-11-02', status: { reason: 'interrupted' } }]);
  });

  it("a held day completes when the vendor's numbers are plausible again", async () => {
    const held = await importDays([...month(10), ['2026-11-11', 300]]);
    const again = await importDays([['2026-11-11', 1110]], 'hold', held.statePath);
    expect(again.state.coverage('unique-users').pending).toEqual([]);
    expect(again.state.isFinal('unique-users', '2026-11-11')).toBe(true);
  });
});
