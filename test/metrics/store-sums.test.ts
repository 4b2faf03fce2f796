import { describe, expect, it } from 'vitest';
import type { MeasureSums } from '../../src/metrics/measure.js';
import { mergeStoreSums, storeSumsOf, storeTotals } from '../../src/metrics/store-sums.js';

const sums = (value: number, weight = 1, nonZero = value > 0 ? 1 : 0): MeasureSums => ({ value, weight, nonZero });

describe('store sums', () => {
  it('adds results sorted by store store by store, with the total of them all, leaving the results’ sums as they were', () => {
    const results = [
      { storeCode: 'S1', sums: sums(3) },
      { storeCode: 'S2', sums: sums(0) },
      { storeCode: 'S2', sums: sums(5, 2, 2) },
      { storeCode: 'S3', sums: sums(7) },
    ];
    const stores = storeSumsOf(results);
    expect(stores.codes).toEqual(['S1', 'S2', 'S3']);
    expect(stores.sums).toEqual([sums(3), sums(5, 3, 2), sums(7)]);
    expect(stores.total).toEqual(sums(15, 5, 4));
    expect(results[1]!.sums).toEqual(sums(0));
    expect(storeSumsOf([])).toEqual({ codes: [], sums: [], total: sums(0, 0) });
  });

  it("makes one day of its units' store sums: one unit as it is, several (a store each, or overlapping) added by store and sorted", () => {
    const whole = { codes: ['S1', 'S2'], sums: [sums(1), sums(2)] };
    expect(mergeStoreSums([whole])).toBe(whole);
    const merged = mergeStoreSums([
      { codes: ['S3'], sums: [sums(3)] },
      { codes: ['S1', 'S3'], sums: [sums(1), sums(4)] },
    ]);
    expect(merged).toEqual({ codes: ['S1', 'S3'], sums: [sums(1), sums(7, 2, 2)] });
    expect(mergeStoreSums([])).toEqual({ codes: [], sums: [] });
  });

  it("gives each store's figure as the metric totals it, unrounded: a sum, or a mean (0 without values)", () => {
    const stores = { codes: ['S1', 'S2', 'S3'], sums: [sums(1_234_567, 4), sums(1, 3), sums(0, 0)] };
    expect([...storeTotals(stores, { measure: 'sum of x', kind: 'sum' })]).toEqual([1_234_567, 1, 0]);
    expect([...storeTotals(stores, { measure: 'mean of x', kind: 'mean' })]).toEqual([1_234_567 / 4, 1 / 3, 0]);
  });
});
