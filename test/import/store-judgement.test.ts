import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DayCompletion, type DayRules } from '../../src/import/day-completion.js';
import type { UnitOutcome } from '../../src/import/pipeline.js';
import { STATE_FILE_NAME } from '../../src/destination/spec.js';
import { METRICS } from '../../src/metrics/descriptors.js';
import type { MeasureSums } from '../../src/metrics/measure.js';
import type { Unit } from '../../src/metrics/unit.js';
import { addDays } from '../../src/window/days.js';
import { loadStateFile } from '../helpers/state-file.js';
import { useTempDirs } from '../helpers/tmp.js';
import { unitDataOf } from '../helpers/unit-data.js';

const tempDir = useTempDirs('store-judgement-');
const NOW = '2026-12-31T12:00:00Z';
const STORES = ['S001', 'S002', 'S003', 'S004', 'S005'];
const FIRST = '2026-09-01';
const RULES = {
  storeCodes: [],
  settleDays: 3,
  giveUpDays: 14,
  onSuspect: 'hold',
  now: new Date(NOW),
  mode: 'utc',
} as const satisfies DayRules;

/** A store's honest unique users: its size, busier at the weekend, a little noise. */
const honest = (store: number, index: number): number =>
  (store + 1) * 1000 * (index % 7 === 6 ? 1.8 : 1) * (1 + ((index * 7 + store) % 5) / 50);

function usersDay(day: string, users: readonly number[]): UnitOutcome {
  const unit: Unit = { metric: METRICS['unique-users'], day };
  const storeSums: MeasureSums[] = users.map((value) => ({ value: Math.round(value), weight: 4, nonZero: value > 0 ? 4 : 0 }));
  const measure = { value: 0, weight: 0, nonZero: 0 };
  for (const sums of storeSums) {
    measure.value += sums.value;
    measure.weight += sums.weight;
    measure.nonZero += sums.nonZero;
  }
  const data = { ...unitDataOf(unit, STORES.length), storeCodes: [...STORES], measure, storeSums };
  return { unit, ok: true, destination: 'test', changed: true, data };
}

async function importDays(days: readonly [string, readonly number[]][], path: string) {
  const state = await loadStateFile(path, { now: new Date(NOW), metricNames: ['unique-users'] });
  const completion = new DayCompletion(
    days.map(([day]) => ({ metric: METRICS['unique-users'], day })),
    RULES,
    state,
  );
  const notes = [];
  for (const [day, users] of days) notes.push(...(await completion.record(usersDay(day, users))));
  return { state, notes };
}

const weeksOf = (count: number, change?: (index: number, store: number, users: number) => number): [string, number[]][] =>
  Array.from({ length: count }, (_, index) => [
    addDays(FIRST, index),
    STORES.map((_code, store) => change?.(index, store, honest(store, index)) ?? honest(store, index)),
  ]);

describe('DayCompletion: each store judged', () => {
  it('holds a day with one store gone dark, naming the store and its range; the day stays out of the history until accepted', async () => {
    const path = join(await tempDir(), STATE_FILE_NAME);
    const days = weeksOf(36, (index, store, users) => (index === 35 && store === 2 ? 0 : users));
    const { state, notes } = await importDays(days, path);
    const dark = days[35]![0];
    expect(notes).toEqual([
      expect.objectContaining({
        kind: 'suspect',
        day: dark,
        held: true,
        suspicion: expect.objectContaining({
          stores: {
            count: 1,
            first: [expect.objectContaining({ store: 'S003', value: 0, allZero: true, basis: 'weekday' })],
            all: ['S003'],
          },
        }),
      }),
    ]);
    expect(state.coverage('unique-users').pending).toEqual([
      { day: dark, status: expect.objectContaining({ reason: 'suspect', suspectStores: 1, firstStores: ['S003'] }) },
    ]);
    expect(state.storeHistory('unique-users')(dark)).toBeUndefined();
    // Fetched again the next night and still wrong: said as held again, in one line with the others.
    const again = await importDays([days[35]!], path);
    expect(again.notes).toEqual([expect.objectContaining({ kind: 'suspect', day: dark, held: true, again: true })]);
    await state.accept('unique-users', [dark]);
    expect(state.storeHistory('unique-users')(dark)?.values[2]).toBe(0);
  });

  it('does not hold five weeks of honest days with a busy weekend', async () => {
    const path = join(await tempDir(), STATE_FILE_NAME);
    const { notes } = await importDays(weeksOf(35), path);
    expect(notes).toEqual([]);
  });

  it('names a store closed for good once: its first day at zero is held, the weeks after it are complete, accept settles it', async () => {
    const path = join(await tempDir(), STATE_FILE_NAME);
    const days = weeksOf(56, (index, store, users) => (index >= 35 && store === 2 ? 0 : users));
    const { state, notes } = await importDays(days, path);
    expect(notes.map((note) => [note.kind, note.day])).toEqual([['suspect', days[35]![0]]]);
    expect(state.coverage('unique-users').pending.map(({ day }) => day)).toEqual([days[35]![0]]);
    await state.accept('unique-users', [days[35]![0]]);
    expect(state.coverage('unique-users').pending).toEqual([]);
    // Eight weeks on, its zeros are its history: not judged, not held.
    const later = await importDays(weeksOf(100, (index, store, users) => (index >= 35 && store === 2 ? 0 : users)).slice(56), path);
    expect(later.notes).toEqual([]);
  });

  it('makes a half day one suspicion of the whole day', async () => {
    const path = join(await tempDir(), STATE_FILE_NAME);
    const { notes } = await importDays(
      weeksOf(36, (index, _store, users) => (index === 35 ? users / 2 : users)),
      path,
    );
    expect(notes).toEqual([
      expect.objectContaining({ kind: 'suspect', suspicion: expect.objectContaining({ batch: { factor: 0.5, stores: 5, judged: 5 } }) }),
    ]);
  });
});
