import { describe, expect, it } from 'vitest';
import { emptyState } from '../../src/state/storage/state-file.js';
import type { StateEntry } from '../../src/state/storage/versions/current.js';
import { foundStores, recordFigures, storeHistory } from '../../src/state/store-history.js';
import { addDays, daysBetween } from '../../src/window/days.js';

const CODES = ['S001', 'S002', 'S003'];

describe('the store figures a state keeps', () => {
  it('keeps the 70 days up to the newest (the rule reads 56 of them), and drops the older', () => {
    const file = emptyState();
    const entry: StateEntry = { complete: [['2026-01-01', '2026-12-31']] };
    const days = daysBetween('2026-09-01', '2026-11-10');
    for (const day of days) recordFigures(file, entry, day, { codes: CODES, values: [100, 200, 300], suspect: false });
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
    recordFigures(file, entry, '2026-09-01', { codes: CODES, values: [100, 0, 300], suspect: true, found: ['S002'] });
    expect(foundStores(entry, '2026-09-01')).toEqual(new Set());
    expect(foundStores(entry, '2026-09-02')).toEqual(new Set(['S002']));
    expect(foundStores(entry, addDays('2026-09-01', 56))).toEqual(new Set(['S002']));
    expect(foundStores(entry, addDays('2026-09-01', 57))).toEqual(new Set());
  });

  it('keeps a complete day with stores found at a new level in the history, and names those stores after it', () => {
    const file = emptyState();
    const entry: StateEntry = { complete: [['2026-09-01', '2026-09-01']] };
    recordFigures(file, entry, '2026-09-01', { codes: CODES, values: [100, 400, 300], suspect: false, found: ['S002'] });
    expect(entry.storeFigures?.['2026-09-01']).toEqual([expect.any(String), expect.any(String), 0, ['S002']]);
    expect(storeHistory(file, entry, 'state.json')('2026-09-01')?.values[1]).toBeCloseTo(400, 0);
    expect(foundStores(entry, '2026-09-02')).toEqual(new Set(['S002']));
  });
});
