import { DESCRIPTORS, type MetricDescriptor } from '../metrics/descriptors.js';
import { emptySums, type MeasureSums } from '../metrics/measure.js';
import { compareText } from '../metrics/schema.js';
import { storeSumsOf } from '../metrics/store-sums.js';
import { Dataset } from '../sandbox/data.js';
import { distortResult } from '../sandbox/distortion.js';
import { ImportState } from '../state/import-state.js';
import type { StateStorage } from '../state/storage/storage.js';
import { addDays, daysBetween, type CalendarDay } from '../window/days.js';
import { DayCompletion, type DayNote, type UnitFigures } from './day-completion.js';

const DAY_MS = 86_400_000;

/** What to replay: the sandbox's data set, the UTC days to judge, and optionally a vendor's breakage of some stores' days. */
export interface ReplayOptions {
  readonly stores: number;
  readonly zones: number;
  readonly seed: number;
  /** The first UTC day, judged with no history (as a first import), and how many days after it. */
  readonly from: CalendarDay;
  readonly days: number;
  readonly metrics?: readonly MetricDescriptor[];
  /** The factor a store's values of a day are published at (0: all zero), as `--distort-day` does; undefined: honest. */
  readonly distortion?: (storeCode: string, day: CalendarDay) => number | undefined;
}

export interface ReplayedMetric {
  readonly metric: string;
  /** The days the rule held, oldest first. */
  readonly held: readonly CalendarDay[];
  /** What the judgements said (suspect days, held or not). */
  readonly notes: readonly DayNote[];
  /** The state the replay made (the metric's key is its name). */
  readonly state: ImportState;
}

/**
 * The sandbox's data judged day by day exactly as an import judges it, without HTTP: each UTC day's results as the
 * sandbox serves them (the stores' local days whose midnight falls in it), added up per store as a page adds them,
 * and judged and recorded by the import's own `DayCompletion` in a state kept in memory, every metric on its own.
 * Honest data must never be held: this is how the false-hold rate is measured (the tests, `bench/store-rule.mjs`).
 */
export async function replayDays(options: ReplayOptions): Promise<ReplayedMetric[]> {
  const metrics = options.metrics ?? DESCRIPTORS;
  const last = addDays(options.from, options.days - 1);
  // Every day over long ago: none is judged "not over", none is young enough to wait for stores.
  const now = new Date(Date.parse(`${addDays(last, 3)}T12:00:00Z`));
  const dataset = new Dataset({ stores: options.stores, zones: options.zones, days: options.days + 3, seed: options.seed, metrics });
  const days = daysBetween(options.from, last);
  const replayed: ReplayedMetric[] = [];
  for (const metric of metrics) {
    // A state of its own: the same judgements as one shared by the metrics, each day's write of it a third as long.
    const state = await ImportState.load(new MemoryStateStorage(), { now, metricNames: [metric.name] });
    const units = days.map((day) => ({ metric, day }));
    // The flags' defaults; they play no part here, as every store reports every day.
    const completion = new DayCompletion(
      units,
      { storeCodes: [], settleDays: 3, giveUpDays: 14, onSuspect: 'hold', now, mode: 'utc' },
      state,
    );
    const notes: DayNote[] = [];
    for (const unit of units) {
      notes.push(...(await completion.record({ unit, ok: true, data: dayFigures(dataset, metric, unit.day, now, options.distortion) })));
    }
    const held = notes.flatMap((note) => (note.kind === 'suspect' && note.held ? [note.day] : []));
    replayed.push({ metric: metric.name, held, notes, state });
  }
  return replayed;
}

/** A UTC day's results of the data set, added up as an import's unit adds them. */
function dayFigures(
  dataset: Dataset,
  metric: MetricDescriptor,
  day: CalendarDay,
  now: Date,
  distortion: ReplayOptions['distortion'],
): UnitFigures {
  const fromMs = Date.parse(`${day}T00:00:00Z`);
  const refs = dataset.query(metric.name, { fromMs, toMs: fromMs + DAY_MS - 1 }, undefined, now);
  const results: { storeCode: string; sums: MeasureSums }[] = [];
  let rowCount = 0;
  for (let position = 0; position < refs.count; position++) {
    const code = dataset.storeCode(refs.storeIndexes[position]!);
    const honest = dataset.result(metric.name, refs.storeIndexes[position]!, refs.localDays[position]!);
    const factor = distortion?.(code, day);
    const result = factor === undefined ? honest : distortResult(metric, honest, factor);
    const sums = emptySums();
    metric.total.add(sums, result);
    results.push({ storeCode: code, sums });
    rowCount += result.values.length;
  }
  // Added up as a unit adds up its results: sorted by store.
  const stores = storeSumsOf(results.sort((a, b) => compareText(a.storeCode, b.storeCode)));
  return { count: refs.count, dropped: 0, rowCount, storeCodes: stores.codes, measure: stores.total, storeSums: stores.sums };
}

/** A state that lives in memory for the replay's length: no file, no lock. */
class MemoryStateStorage implements StateStorage {
  readonly location = '(replay in memory)';
  private text: string | undefined;

  read(): Promise<string | undefined> {
    return Promise.resolve(this.text);
  }

  update(change: (current: string | undefined) => string | undefined): Promise<void> {
    this.text = change(this.text) ?? this.text;
    return Promise.resolve();
  }
}
