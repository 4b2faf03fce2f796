import { describe, expect, it } from 'vitest';
import { emptyState } from '../../src/state/storage/state-file.js';
import type { StateEntry } from '../../src/state/storage/versions/current.js';
import { DecodedFigures, recordFigures, storeHistory } from '../../src/state/store-history.js';

const CODES = ['S1', 'S2'];

/** A state as a run reads it again after each write: a new object holding the figures recorded so far. */
function stateWith(days: readonly [string, number][]) {
  const file = emptyState();
  const entry: StateEntry = { complete: [['2026-11-01', '2026-11-30']] };
  for (const [day, figure] of days) recordFigures(file, entry, day, { codes: CODES, values: Float64Array.of(figure, 1), suspect: false });
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

  it('gives no figures for a day not complete, or judged suspect and not accepted', () => {
    const { file, entry } = stateWith([['2026-11-02', 100]]);
    recordFigures(file, entry, '2026-11-03', { codes: CODES, values: Float64Array.of(5, 1), suspect: true });
    entry.complete = [['2026-11-03', '2026-11-03']];
    const history = storeHistory(file, entry, 'state.json');
    expect(history('2026-11-02')).toBeUndefined();
    expect(history('2026-11-03')).toBeUndefined();
    entry.accepted = [['2026-11-03', '2026-11-03']];
    expect(storeHistory(file, entry, 'state.json')('2026-11-03')?.codes).toEqual(CODES);
  });
});
