import type { MetricDescriptor, MetricResult } from './descriptors.js';

/**
 * A result as a vendor's broken batch publishes it: every value scaled by `factor` (0: all zero), still valid for the
 * data contract (whole users, a screen time of at most four-digit hours, traffic shares within 0..1), so only its
 * numbers give it away. The sandbox serves it (`--distort-day`); a backtest injects it into data already imported.
 */
export function distortResult<Result extends MetricResult>(
  { valueKey, synthetic }: MetricDescriptor,
  result: Result,
  factor: number,
): Result {
  return { ...result, values: result.values.map((entry) => ({ ...entry, [valueKey]: synthetic.scaled(entry[valueKey], factor) })) };
}
