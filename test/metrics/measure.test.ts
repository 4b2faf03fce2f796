import { describe, expect, it } from 'vitest';
import { exactTotalOf, totalOf } from '../../src/metrics/measure.js';

const SUM = { measure: 'sum of x', kind: 'sum' } as const;
const MEAN = { measure: 'mean of x', kind: 'mean' } as const;

describe('a day total of sums', () => {
  it('is the sum or the mean as it is for a store, and to six significant digits for the day as the state keeps it', () => {
    const sums = { value: 1_234_567, weight: 3, nonZero: 3 };
    expect(exactTotalOf(sums, SUM)).toBe(1_234_567);
    expect(totalOf(sums, SUM)).toBe(1_234_570);
    expect(exactTotalOf(sums, MEAN)).toBe(1_234_567 / 3);
    expect(totalOf(sums, MEAN)).toBe(411_522);
    expect(exactTotalOf({ value: 0, weight: 0, nonZero: 0 }, MEAN)).toBe(0);
  });
});
