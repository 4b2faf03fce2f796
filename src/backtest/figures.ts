import type { MetricDescriptor, MetricResult } from '../metrics/descriptors.js';
import { distortResult } from '../metrics/distortion.js';
import { addSums, emptySums, type MeasureSums } from '../metrics/measure.js';
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

/**
 * `unitFigures` a result at a time, as a unit's file is read: only each store's sums are kept, not its results. A
 * file's results come sorted by store, one a store: their codes and sums are then the figures as they are.
 */
export class FiguresBuilder {
  private readonly codes: string[] = [];
  private readonly sums: MeasureSums[] = [];
  private sorted = true;
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
    const last = this.codes.at(-1);
    // Strictly after the code before: a store's second result (a unit spanning days) is summed as unsorted ones are.
    if (last !== undefined && compareText(last, result.store_code) >= 0) this.sorted = false;
    this.codes.push(result.store_code);
    this.sums.push(sums);
    this.rowCount += result.values.length;
  }

  figures(): UnitFigures {
    const { codes, sums } = this;
    const stores = this.sorted
      ? { codes, sums, total: totalOf(sums) }
      : // Sorted as a unit sorts its results (a stable sort: a file's order within a store is kept).
        storeSumsOf(
          codes.map((storeCode, index) => ({ storeCode, sums: sums[index]! })).sort((a, b) => compareText(a.storeCode, b.storeCode)),
        );
    return {
      count: codes.length,
      dropped: 0,
      rowCount: this.rowCount,
      storeCodes: stores.codes,
      measure: stores.total,
      storeSums: stores.sums,
    };
  }
}

/** The sums of every store as one. */
function totalOf(sums: readonly MeasureSums[]): MeasureSums {
  const total = emptySums();
  for (const each of sums) addSums(total, each);
  return total;
}
