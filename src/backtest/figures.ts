import type { MetricDescriptor, MetricResult } from '../metrics/descriptors.js';
import { distortResult } from '../metrics/distortion.js';
import { emptySums, type MeasureSums } from '../metrics/measure.js';
import { compareText } from '../metrics/schema.js';
import { storeSumsOf } from '../metrics/store-sums.js';
import type { UnitFigures } from './judge-night.js';

/** The factor a store's values are scaled by (0: all zero), or undefined: as stored. */
export type StoreFactor = (storeCode: string) => number | undefined;

/**
 * A unit's results added up as an import's unit adds them (each result into its store's sums with the metric's own
 * total, stores in code order), optionally with some stores' values scaled first as a vendor's broken batch would.
 */
export function unitFigures(metric: MetricDescriptor, results: readonly MetricResult[], factorOf?: StoreFactor): UnitFigures {
  const summed: { storeCode: string; sums: MeasureSums }[] = [];
  let rowCount = 0;
  for (const stored of results) {
    const factor = factorOf?.(stored.store_code);
    const result = factor === undefined ? stored : distortResult(metric, stored, factor);
    const sums = emptySums();
    metric.total.add(sums, result);
    summed.push({ storeCode: result.store_code, sums });
    rowCount += result.values.length;
  }
  // Sorted as a unit sorts its results (a stable sort: a file's order within a store is kept); a file is already.
  const sorted = summed.every((each, index) => index === 0 || compareText(summed[index - 1]!.storeCode, each.storeCode) <= 0);
  const stores = storeSumsOf(sorted ? summed : summed.sort((a, b) => compareText(a.storeCode, b.storeCode)));
  return { count: results.length, dropped: 0, rowCount, storeCodes: stores.codes, measure: stores.total, storeSums: stores.sums };
}
