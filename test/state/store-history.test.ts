import { describe, expect, it } from 'vitest';
import { emptyState } from '../../src/state/storage/state-file.js';
import type { StateEntry } from '../../src/state/storage/versions/current.js';
import { DecodedFigures, foundStores, recordFigures, storeHistory } from '../../src/state/store-history.js';
import { addDays, daysBetween } from '../../src/window/days.js';

const CODES = ['S001', 'S002', 'S003'];

describe('the store figures a state keeps', () => {
  it('keeps the 70 days up to the newest (the rule reads 56 of them), and drops the older', () => {
    const file = emptyState();
    const entry: StateEntry = { complete: [['2026-01-01', '2026-12-31']] };
    const days = daysBetween('2026-09-01', '2026-11-10');
    for (const day of days) recordFigures(file, entry, day, { codes: CODES, values: Float64Array.of(100, 200, 300), suspect: false });
    const kept = Object.keys(entry.storeFigures ?? {}).sort();
    expect(kept).toEqual(days.slice(-70));
    expect(kept[0]).toBe(addDays('2026-11-10', -69));
    const history = storeHistory(file, entry, 'state.json');
    expect(history(kept[0]!)?.values[1]).toBeCloseTo(200, 0);
    expect(history(addDays(kept[0]!, -1))).toBeUndefined();
  });

  it('names a store a suspect day found for the 56 days after it, not on the day itself nor on the 57th', () => {
    const file = emptyState();
    const entry: StateEntry = {};
    recordFigures(file, entry, '2026-09-01', { codes: CODES, values: Float64Array.of(100, 0, 300), suspect: true, found: ['S002'] });
    expect(foundStores(entry, '2026-09-01')).toEqual(new Set());
    expect(foundStores(entry, '2026-09-02')).toEqual(new Set(['S002']));
    expect(foundStores(entry, addDays('2026-09-01', 56))).toEqual(new Set(['S002']));
    expect(foundStores(entry, addDays('2026-09-01', 57))).toEqual(new Set());
  });

  it('keeps a complete day with stores found at a new level in the history, and names those stores after it', () => {
    const file = emptyState();
    const entry: StateEntry = { complete: [['2026-09-01', '2026-09-01']] };
    recordFigures(file, entry, '2026-09-01', { codes: CODES, values: Float64Array.of(100, 400, 300), suspect: false, found: ['S002'] });
    expect(entry.storeFigures?.['2026-09-01']).toEqual([expect.any(String), expect.any(String), 0, ['S002']]);
    expect(storeHistory(file, entry, 'state.json')('2026-09-01')?.values[1]).toBeCloseTo(400, 0);
    expect(foundStores(entry, '2026-09-02')).toEqual(new Set(['S002']));
  });
});

const TWO_STORES = ['S1', 'S2'];

/** A state as a run reads it again after each write: a new object holding the figures recorded so far. */
function stateWith(days: readonly [string, number][]) {
  const file = emptyState();
  const entry: StateEntry = { complete: [['2026-11-01', '2026-11-30']] };
  for (const [day, figure] of days)
    recordFigures(file, entry, day, { codes: TWO_STORES, values: Float64Array.of(figure, 1), suspect: false });
  file.metrics['unique-users'] = entry;
  return { file, entry };
}

describe('store history', () => {
  it("decodes a day's figures once for the run, though the state is read again, and again when its record changed", () => {
    const decoded = new DecodedFigures();
    const first = stateWith([['2026-11-02', 100]]);
    const figures = storeHistory(first.file, first.entry, 'state.json', decoded)('2026-11-02');
    expect([...figures!.values].map((value) => Math.round(value))).toEqual([100, 1]);
    const reread = stateWith([['2026-11-02', 100]]);
    expect(storeHistory(reread.file, reread.entry, 'state.json', decoded)('2026-11-02')).toBe(figures);
    const changed = stateWith([['2026-11-02', 400]]);
    const again = storeHistory(changed.file, changed.entry, 'state.json', decoded)('2026-11-02');
    expect(Math.round(again!.values[0]!)).toBe(400);
    expect(again!.indexOf).toBe(figures!.indexOf);
  });

  it('keeps no more decoded days than the state keeps figures: the oldest is decoded again if asked', () => {
    const decoded = new DecodedFigures();
    const file = emptyState();
    const entry: StateEntry = { complete: [['2026-01-01', '2026-12-31']] };
    const days = daysBetween('2026-01-01', '2026-12-31');
    const history = storeHistory(file, entry, 'state.json', decoded);
    const first = days.map((day) => {
      recordFigures(file, entry, day, { codes: CODES, values: Float64Array.of(1, 2, 3), suspect: false });
      return history(day);
    });
    // The newest 70 are those decoded; an older day, were its record still there, is decoded afresh.
    const newest = days.slice(-70);
    for (const day of newest) expect(history(day)).toBe(first[days.indexOf(day)]);
    // The same record as it was written (every day's figures are the same): decoded already, it would be the same.
    entry.storeFigures = { ...entry.storeFigures, '2026-01-01': entry.storeFigures![newest[0]!]! };
    const again = history('2026-01-01');
    expect(again).not.toBe(first[0]);
    expect(again?.values.length).toBe(3);
  });

  it('gives no figures for a day not complete, or judged suspect and not accepted', () => {
    const { file, entry } = stateWith([['2026-11-02', 100]]);
    recordFigures(file, entry, '2026-11-03', { codes: TWO_STORES, values: Float64Array.of(5, 1), suspect: true });
    entry.complete = [['2026-11-03', '2026-11-03']];
    const history = storeHistory(file, entry, 'state.json');
    expect(history('2026-11-02')).toBeUndefined();
    expect(history('2026-11-03')).toBeUndefined();
    entry.accepted = [['2026-11-03', '2026-11-03']];
    expect(storeHistory(file, entry, 'state.json')('2026-11-03')?.codes).toEqual(TWO_STORES);
  });
});
