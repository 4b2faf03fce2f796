import type { MetricDescriptor } from '../metrics/descriptors.js';
import type { MetricResult } from './data.js';

/**
 * A result as a vendor's broken batch publishes it: every value scaled by `factor` (0: all zero), still valid for the
 * data contract (whole users, a screen time of at most four-digit hours, traffic shares within 0..1), so only its
 * numbers give it away.
 */
export function distortResult({ valueKey, synthetic }: MetricDescriptor, result: MetricResult, factor: number): MetricResult {
  return { ...result, values: result.values.map((entry) => ({ ...entry, [valueKey]: synthetic.scaled(entry[valueKey], factor) })) };
}
