import type { MetricDescriptor, MetricResult } from '../metrics/descriptors.js';
import { emptySums } from '../metrics/measure.js';
import { ImportState } from '../state/import-state.js';
import { MemoryStateStorage } from '../state/storage/memory.js';
import type { Suspicion } from '../state/judgement/suspect.js';
import { overAt, type DayMode } from '../window/day-mode.js';
import type { CalendarDay } from '../window/days.js';
import { FAULTS, isFaultDay, pickStore, type FaultName } from './faults.js';
import { unitFigures, type StoreFactor } from './figures.js';
import { judgeNight, type DayNote, type JudgedUnit, type UnitFigures } from './judge-night.js';

/** What a backtest replays: each metric's days with data, and a day's units read back (each its results). */
export interface ReplayInput {
  readonly metrics: readonly MetricDescriptor[];
  readonly mode: DayMode;
  /** The days to replay of a metric, oldest first: every day from its first with data to its last. */
  daysOf(metric: MetricDescriptor): Promise<readonly CalendarDay[]>;
  read(metric: MetricDescriptor, day: CalendarDay): Promise<readonly (readonly MetricResult[])[]>;
  /**
   * A day's units already added up, each as it is read, so that a day's results are never held (a year of nights of
   * 20,000 stores); without it, `read`. A day a fault goes into is read whole: the fault scales its results.
   */
  figures?(metric: MetricDescriptor, day: CalendarDay): Promise<readonly UnitFigures[]>;
  readonly fault?: FaultName;
  /** The import's flags that judge a day (their defaults unless the user's runs use others). */
  readonly settleDays?: number;
  readonly giveUpDays?: number;
  /** Called after each night, for a progress bar. */
  readonly onNight?: (metric: string, done: number, total: number) => void;
}

/** A day the rule held, on the night it first held it. */
export interface HeldDay {
  readonly day: CalendarDay;
  /** Nights after the day was first judged (0: the first night, as the nightly import would say it). */
  readonly nightsLate: number;
  /** The stores it names and how many store-days that is (every store of the day when the whole day moved). */
  readonly stores: readonly string[];
  readonly storeDays: number;
  readonly suspicion: Suspicion;
  /** A day a fault was injected into. */
  readonly injected: boolean;
}

export interface InjectedFault {
  readonly day: CalendarDay;
  readonly fault: FaultName;
  /** The store it broke; none for a whole day. */
  readonly store?: string;
}

export interface CaughtFault extends InjectedFault {
  readonly nightsLate: number;
}

export interface MetricReplay {
  readonly metric: string;
  readonly days: readonly CalendarDay[];
  /** Store-days judged: each day's stores, once. */
  readonly storeDays: number;
  readonly held: readonly HeldDay[];
  /** Days still held when the replay ended (not settled by the days after them). */
  readonly stillHeld: readonly CalendarDay[];
  readonly injected: readonly InjectedFault[];
  readonly caught: readonly CaughtFault[];
  /** The state the replay made in memory (its key is the metric's name): the figures nightly imports would record. */
  readonly state: ImportState;
}

const HOUR_MS = 3_600_000;

/** A night's day as read: its units' results, or (no fault going into it) their figures alone. */
type DayRead = { readonly results: readonly (readonly MetricResult[])[] } | { readonly figures: readonly UnitFigures[] };

/**
 * Each metric's days replayed night by night, as nightly `--catch-up` imports would have judged them: a night judges
 * the day just over and, again, the days still pending (held, or waiting for stores), in day order, through the
 * import's own judgement into a state kept in memory. Nothing is requested and nothing is written.
 */
export async function replayMetrics(input: ReplayInput): Promise<MetricReplay[]> {
  const replays: MetricReplay[] = [];
  for (const metric of input.metrics) replays.push(await replayMetric(input, metric));
  return replays;
}

async function replayMetric(input: ReplayInput, metric: MetricDescriptor): Promise<MetricReplay> {
  const days = await input.daysOf(metric);
  const lastNow = new Date(days.length === 0 ? 0 : overAt(days.at(-1)!, input.mode) + HOUR_MS);
  const state = await ImportState.load(new MemoryStateStorage('(backtest in memory)'), {
    now: lastNow,
    metricNames: [metric.name],
    mode: input.mode,
  });
  const waiting = new Map<CalendarDay, readonly JudgedUnit[]>();
  const firstNight = new Map<CalendarDay, number>();
  const faults = new Map<CalendarDay, InjectedFault>();
  /** An injected day's units as stored, for the night after its fault is held. */
  const honestUnits = new Map<CalendarDay, readonly JudgedUnit[]>();
  const held: HeldDay[] = [];
  let storeDays = 0;
  // The next day is read (a file, an object, a query) while this one is judged.
  const faultOf = (night: number) => (input.fault !== undefined && isFaultDay(night) ? input.fault : undefined);
  const reading = (index: number): Promise<DayRead> | undefined => {
    const day = days[index];
    if (day === undefined) return undefined;
    const read: Promise<DayRead> =
      faultOf(index) === undefined && input.figures !== undefined
        ? input.figures(metric, day).then((figures) => ({ figures }))
        : input.read(metric, day).then((results) => ({ results }));
    // Awaited on its own night; a night that fails before then ends the replay with its own error instead.
    read.catch(() => {});
    return read;
  };
  let next = reading(0);
  for (const [night, day] of days.entries()) {
    const fault = faultOf(night);
    const read = (await next) ?? { results: [] };
    next = reading(night + 1);
    const results = 'results' in read ? read.results : [];
    const factorOf = fault === undefined ? undefined : injection(metric, day, fault, results, faults);
    const unitsOf = (factor?: StoreFactor): JudgedUnit[] =>
      // A day with no data is a unit without results, as the vendor's empty answer is.
      ('figures' in read && read.figures.length > 0
        ? read.figures
        : (results.length > 0 ? results : [[]]).map((unitResults) => unitFigures(metric, unitResults, factor))
      ).map((figures) => ({ unit: { metric, day }, figures }));
    const units = unitsOf(factorOf);
    if (factorOf !== undefined) honestUnits.set(day, unitsOf());
    waiting.set(day, units);
    firstNight.set(day, night);
    storeDays += storeCount(units);

    const tonight = [...waiting.keys()].sort().flatMap((each) => waiting.get(each)!);
    const notes = await judgeNight(state, tonight, {
      now: new Date(overAt(day, input.mode) + HOUR_MS),
      mode: input.mode,
      settleDays: input.settleDays ?? 3,
      giveUpDays: input.giveUpDays ?? 14,
      onSuspect: 'hold',
    });
    for (const note of notes) {
      const first = heldDay(note, night - (firstNight.get(note.day) ?? night), waiting.get(note.day) ?? [], faults.has(note.day));
      if (first === undefined || held.some((each) => each.day === note.day)) continue;
      held.push(first);
      // A held fault is what the hold is for: the vendor, told, publishes the day again as it was, and the next night
      // fetches it (a fault left in would be a store found for weeks, kept from the faults after it).
      const honest = honestUnits.get(note.day);
      if (honest !== undefined) waiting.set(note.day, honest);
    }
    // What a later night asks again: the days still pending (as catch-up asks them), not the final or given up.
    for (const each of [...waiting.keys()]) {
      if (state.isFinal(metric.name, each) || state.isGivenUp(metric.name, each)) waiting.delete(each);
    }
    input.onNight?.(metric.name, night + 1, days.length);
  }
  const caught = [...faults.values()].flatMap((fault) => {
    const hold = held.find((each) => each.day === fault.day);
    const named =
      hold !== undefined && (fault.store === undefined || hold.suspicion.batch !== undefined || hold.stores.includes(fault.store));
    return named ? [{ ...fault, nightsLate: hold.nightsLate }] : [];
  });
  const stillHeld = state.coverage(metric.name).pending.flatMap(({ day, status }) => (status.reason === 'suspect' ? [day] : []));
  return { metric: metric.name, days, storeDays, held, stillHeld, injected: [...faults.values()], caught, state };
}

/** How many stores a day's units hold, each once (a unit's own codes are so already: no set of a day's stores). */
function storeCount(units: readonly JudgedUnit[]): number {
  return units.length === 1 ? units[0]!.figures.storeCodes.length : new Set(units.flatMap(({ figures }) => figures.storeCodes)).size;
}

/** A held suspect note as the report gives it, with its stores. */
function heldDay(note: DayNote, nightsLate: number, units: readonly JudgedUnit[], injected: boolean): HeldDay | undefined {
  if (note.kind !== 'suspect' || !note.held) return undefined;
  const named = note.suspicion.stores?.all ?? [];
  const wholeDay = named.length === 0 || note.suspicion.batch !== undefined;
  return {
    day: note.day,
    nightsLate,
    stores: named,
    storeDays: wholeDay ? storeCount(units) : named.length,
    suspicion: note.suspicion,
    injected,
  };
}

/** The fault of a fault day: which stores it scales and by what, recorded as injected. */
function injection(
  metric: MetricDescriptor,
  day: CalendarDay,
  fault: FaultName,
  results: readonly (readonly MetricResult[])[],
  faults: Map<CalendarDay, InjectedFault>,
): StoreFactor | undefined {
  const { factor, wholeDay } = FAULTS[fault];
  if (wholeDay) {
    faults.set(day, { day, fault });
    return () => factor;
  }
  // A store with a value above zero that day: a store already at zero (its closing day) cannot go dark.
  const open = [...new Set(results.flat().flatMap((result) => (hasValue(metric, result) ? [result.store_code] : [])))].sort();
  const store = pickStore(day, open);
  if (store === undefined) return undefined;
  faults.set(day, { day, fault, store });
  return (code) => (code === store ? factor : undefined);
}

/** Whether a result has a value above zero, as the metric's total reads its values. */
function hasValue(metric: MetricDescriptor, result: MetricResult): boolean {
  const sums = emptySums();
  metric.total.add(sums, result);
  return sums.nonZero > 0;
}
