import type { MetricDescriptor, MetricResult } from '../metrics/descriptors.js';
import { DESCRIPTORS } from '../metrics/descriptors.js';
import { distortResult } from '../metrics/distortion.js';
import { Dataset } from '../sandbox/data.js';
import { addDays, daysBetween, type CalendarDay } from '../window/days.js';
import type { FaultName } from './faults.js';
import { replayMetrics, type MetricReplay } from './replay.js';

const DAY_MS = 86_400_000;

/** The sandbox's data set to replay, and optionally a vendor's breakage of some stores' days. */
export interface SandboxDays {
  readonly stores: number;
  readonly zones: number;
  readonly seed: number;
  /** The first UTC day, judged with no history (as a first import), and how many days from it. */
  readonly from: CalendarDay;
  readonly days: number;
  readonly metrics?: readonly MetricDescriptor[];
  /** The factor a store's values of a day are published at (0: all zero), as `--distort-day` does; undefined: honest. */
  readonly distortion?: (storeCode: string, day: CalendarDay) => number | undefined;
  readonly fault?: FaultName;
}

/**
 * The sandbox's data backtested without files or HTTP: each UTC day's results as the sandbox serves them (the
 * stores' local days whose midnight falls in it), replayed as the backtest replays an output. The false-hold rate
 * of the rule on honest data at any size (the tests, `bench/store-rule.mjs`).
 */
export function backtestSandbox(options: SandboxDays): Promise<MetricReplay[]> {
  const metrics = options.metrics ?? DESCRIPTORS;
  const last = addDays(options.from, options.days - 1);
  const now = new Date(Date.parse(`${addDays(last, 3)}T12:00:00Z`));
  const dataset = new Dataset({ stores: options.stores, zones: options.zones, days: options.days + 3, seed: options.seed, metrics });
  const days = daysBetween(options.from, last);
  return replayMetrics({
    metrics,
    mode: 'utc',
    daysOf: () => Promise.resolve(days),
    read: (metric, day) => Promise.resolve([dayResults(dataset, metric, day, now, options.distortion)]),
    ...(options.fault === undefined ? {} : { fault: options.fault }),
  });
}

/** A UTC day's results of the data set as the sandbox serves them, with a distortion's stores scaled. */
function dayResults(
  dataset: Dataset,
  metric: MetricDescriptor,
  day: CalendarDay,
  now: Date,
  distortion: SandboxDays['distortion'],
): MetricResult[] {
  const fromMs = Date.parse(`${day}T00:00:00Z`);
  const refs = dataset.query(metric.name, { fromMs, toMs: fromMs + DAY_MS - 1 }, undefined, now);
  const results = dataset.slice(metric.name, refs, 0, refs.count);
  return results.map((result) => {
    const factor = distortion?.(result.store_code, day);
    return factor === undefined ? result : distortResult(metric, result, factor);
  });
}
