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
  const figures = new FiguresBuilder(metric, factorOf);
  for (const result of results) figures.add(result);
  return figures.figures();
}

/** `unitFigures` a result at a time, as a unit's file is read: only each store's sums are kept, not its results. */
export class FiguresBuilder {
  private readonly summed: { storeCode: string; sums: MeasureSums }[] = [];
  private rowCount = 0;

  constructor(
    private readonly metric: MetricDescriptor,
    private readonly factorOf?: StoreFactor,
  ) {}

  add(stored: MetricResult): void {
    const factor = this.factorOf?.(stored.store_code);
    const result = factor === undefined ? stored : distortResult(this.metric, stored, factor);
    const sums = emptySums();
    this.metric.total.add(sums, result);
    this.summed.push({ storeCode: result.store_code, sums });
    this.rowCount += result.values.length;
  }

  figures(): UnitFigures {
    const { summed } = this;
    // Sorted as a unit sorts its results (a stable sort: a file's order within a store is kept); a file is already.
    const sorted = summed.every((each, index) => index === 0 || compareText(summed[index - 1]!.storeCode, each.storeCode) <= 0);
    const stores = storeSumsOf(sorted ? summed : [...summed].sort((a, b) => compareText(a.storeCode, b.storeCode)));
    return {
      count: summed.length,
      dropped: 0,
      rowCount: this.rowCount,
      storeCodes: stores.codes,
      measure: stores.total,
      storeSums: stores.sums,
    };
  }
}
