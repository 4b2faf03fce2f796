import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';
import { distributeTraffic, formatDuration } from '../../src/metrics/synthetic.js';

describe('synthetic values', () => {
  it('distributes rounding remainders and copes with one zone and all-zero weights', () => {
    expect(distributeTraffic([1, 1, 1])).toEqual(['0.33334', '0.33333', '0.33333']);
    expect(distributeTraffic([5])).toEqual(['1.00000']);
    expect(distributeTraffic([0, 0])).toEqual(['1.00000', '0.00000']);
    expect(distributeTraffic([0, 3])).toEqual(['0.00000', '1.00000']);
  });

  it('formats a screen time as hh:mm:ss', () => {
    expect(formatDuration(3 * 3600 + 61)).toBe('03:01:01');
    expect(formatDuration(0)).toBe('00:00:00');
  });

  it.each(METRIC_NAMES)(
    "%s: every made-up value, as published and scaled by a broken batch, passes the metric's own contract",
    (metric) => {
      const { synthetic, isValue } = METRICS[metric];
      const hashes = Array.from({ length: 500 }, (_, index) => Math.imul(index + 1, 2_654_435_761) >>> 0);
      const values = synthetic.values(
        hashes,
        900,
        hashes.map((hash) => hash ^ 0x5bd1e995),
      );
      expect(values).toHaveLength(hashes.length);
      for (const value of values) {
        expect(isValue(value), String(value)).toBe(true);
        for (const factor of [0, 0.1, 3, 1000]) expect(isValue(synthetic.scaled(value, factor)), `${String(value)} x ${factor}`).toBe(true);
      }
    },
  );

  it('gives each metric a salt of its own, so their values differ', () => {
    expect(new Set(METRIC_NAMES.map((metric) => METRICS[metric].synthetic.salt)).size).toBe(METRIC_NAMES.length);
  });
});
