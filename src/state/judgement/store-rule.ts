import { addDays, type CalendarDay } from '../../window/days.js';
import type { StoreFigures } from './store-figures.js';

/**
 * The per-store rule's numbers. A store's day is judged against the same store's same weekday over the 8 weeks before
 * (a Saturday against Saturdays: the week's rhythm is the largest honest change a store has); while fewer than 4 of
 * them are complete, against every complete day of the 28 before, with a wider floor, as that history mixes the
 * rhythm in. Fewer than 7 such days: the store is not judged (a new store, a new metric). On a log scale, so that a
 * half and a double are the same distance, with median and MAD (robust: one odd day among eight moves them little).
 * Suspect when the distance passes both the floor (a store's ordinary variation, a sale or a storm, is never a
 * suspicion) and `mads` times the scaled MAD (a store whose days vary a lot is allowed more).
 */
export const STORE_RULE = {
  weeks: 8,
  minimumSameWeekdays: 4,
  recentDays: 28,
  minimumRecentDays: 7,
  /** ln 1.6: beyond a 60% rise or a fall to 62.5% of the weekday's median. */
  weekdayFloor: Math.log(1.6),
  /** ln 2.5: the fallback's history holds Tuesdays and Saturdays alike. */
  recentFloor: Math.log(2.5),
  mads: 4,
  /** A whole-day suspicion: at least 3 judged stores, 60% of them within ln 1.25 of their common factor. */
  batchMinimumStores: 3,
  batchShare: 0.6,
  batchSpread: Math.log(1.25),
  /** ln 3: a store's new level settles by itself only within a third to three times its old one (a new wing, a refit). */
  newLevelWithin: Math.log(3),
} as const;

/** 1.4826 x MAD estimates a standard deviation for normal data. */
const MAD_SCALE = 1.4826;

/** A store's day found suspect, with the range it was expected in. */
export interface StoreFinding {
  readonly store: string;
  readonly value: number;
  readonly median: number;
  readonly low: number;
  readonly high: number;
  /** What it was judged against: its same weekday, or every recent day while too few weekdays are complete. */
  readonly basis: 'weekday' | 'recent';
  readonly allZero?: true;
}

/** Most stores moved together by `factor`: one suspicion of the whole day (the vendor's batch). */
export interface BatchFinding {
  readonly factor: number;
  readonly stores: number;
  readonly judged: number;
}

export interface StoreJudgement {
  /** Stores judged (those with history enough). */
  readonly judged: number;
  readonly batch?: BatchFinding;
  /** Stores suspect on their own (after the batch's factor, when there is one), by store code. */
  readonly stores: readonly StoreFinding[];
}

/** A store's expectation: the median of its history's logs and how far from it a day may be. */
interface Baseline {
  readonly median: number;
  readonly allowed: number;
  readonly basis: 'weekday' | 'recent';
  /** Every day of its history was zero: zeros are its normal. */
  readonly zeros: boolean;
}

/**
 * Judges each store's figure of `day` against its history: `history(d)` gives the figures of a complete day that was
 * not suspect (undefined otherwise), so a suspect day never judges later ones. Stores in `found` were named by an
 * earlier suspect day and are not judged again (one finding, not one a night).
 */
export function judgeStores(
  day: CalendarDay,
  figures: StoreFigures,
  history: (day: CalendarDay) => StoreFigures | undefined,
  found: ReadonlySet<string> = new Set(),
): StoreJudgement {
  const { weekdays, recent } = historyOf(day, history, -1);
  const lists = new Map<readonly string[], Int32Array>();
  const { judged, zeros } = storesAgainstBaselines(
    figures,
    aligned(figures.codes, weekdays, lists),
    aligned(figures.codes, recent, lists),
    found,
  );
  // While any store is judged from a history that mixes the weekdays, the whole day moves with the rhythm: its floor.
  const batchFloor = judged.some(({ baseline }) => baseline.basis === 'recent') ? STORE_RULE.recentFloor : STORE_RULE.weekdayFloor;
  const batch = batchOf(
    judged.map(({ distance }) => distance),
    judged.length + zeros.length,
    batchFloor,
  );
  const shift = batch === undefined ? 0 : Math.log(batch.factor);
  const stores = [
    ...zeros,
    ...judged
      .filter(({ distance, baseline }) => Math.abs(distance - shift) > baseline.allowed)
      .map(({ store, value, baseline }) => rangeOf(store, value, baseline)),
  ].sort((a, b) => (a.store < b.store ? -1 : 1));
  return { judged: judged.length + zeros.length, ...(batch === undefined ? {} : { batch }), stores };
}

/**
 * Of the stores a day found, those the days after it confirm: the same store's level since (its same weekdays after
 * the day, or every day of the 28 after while fewer than 4 are complete, by the same rule) has the day's figure in its
 * range, so the day was the first of a new normal (a store enlarged or remodelled), not a failure. A store at zero, or
 * beyond three times or a third of its old level, is never confirmed: a store closed for good, or sensors failing for
 * weeks, are a person's to settle.
 */
export function confirmedByLaterDays(
  day: CalendarDay,
  history: (day: CalendarDay) => StoreFigures | undefined,
  findings: readonly StoreFinding[],
): ReadonlySet<string> {
  const confirmed = new Set<string>();
  const candidates = findings.filter(
    (finding) => finding.value > 0 && Math.abs(Math.log(finding.value / finding.median)) <= STORE_RULE.newLevelWithin,
  );
  if (candidates.length === 0) return confirmed;
  const { weekdays, recent } = historyOf(day, history, 1);
  const codes = candidates.map(({ store }) => store);
  const lists = new Map<readonly string[], Int32Array>();
  const [after, recentAfter] = [aligned(codes, weekdays, lists), aligned(codes, recent, lists)];
  candidates.forEach(({ store, value }, index) => {
    const baseline = baselineOf(index, after, recentAfter);
    if (baseline !== undefined && !baseline.zeros && Math.abs(Math.log(value) - baseline.median) <= baseline.allowed) confirmed.add(store);
  });
  return confirmed;
}

/**
 * The stores at zero on `day` for which that weekday is their closing day: on one side of it (the weeks before, or,
 * for a held day judged again, the weeks after) the store's same weekdays are mostly zero while its other days of the
 * 28 are mostly open. Days as recorded, held ones too (what the vendor published): the first Sunday a store is closed
 * is held, the second shows its rhythm; and days held dark are not open days. Such a zero is the store's weekly
 * rhythm, not a suspicion. A store closed for good, or dark for weeks, is zero on every day: never one.
 */
export function closingDays(
  day: CalendarDay,
  figures: StoreFigures,
  recorded: (day: CalendarDay) => StoreFigures | undefined,
): ReadonlySet<string> {
  const closing = new Set<string>();
  const zeros = figures.codes.filter((_, index) => !(figures.values[index]! > 0));
  if (zeros.length === 0) return closing;
  for (const direction of [-1, 1] as const) {
    const weekdays = daysAround(day, direction, (offset) => offset % 7 === 0, recorded);
    if (weekdays.length === 0) continue;
    const others = daysAround(day, direction, (offset) => offset % 7 !== 0 && offset <= STORE_RULE.recentDays, recorded);
    for (const store of zeros) {
      if (mostlyZero(store, weekdays) === true && mostlyZero(store, others) === false) closing.add(store);
    }
  }
  return closing;
}

/** The days within the rule's weeks on one side of `day` whose distance passes `test`, as `figuresOf` gives them. */
function daysAround(
  day: CalendarDay,
  direction: 1 | -1,
  test: (offset: number) => boolean,
  figuresOf: (day: CalendarDay) => StoreFigures | undefined,
): StoreFigures[] {
  const days: StoreFigures[] = [];
  for (let offset = 1; offset <= STORE_RULE.weeks * 7; offset++) {
    if (!test(offset)) continue;
    const figures = figuresOf(addDays(day, direction * offset));
    if (figures !== undefined) days.push(figures);
  }
  return days;
}

/** Whether the store's figures among these days are mostly zero; undefined when it is in none of them. */
function mostlyZero(store: string, days: readonly StoreFigures[]): boolean | undefined {
  let count = 0;
  let positive = 0;
  for (const figures of days) {
    const index = figures.indexOf.get(store);
    if (index === undefined) continue;
    count++;
    if (figures.values[index]! > 0) positive++;
  }
  return count === 0 ? undefined : positive * 2 <= count;
}

/** The complete days that judge `day`: its same weekdays and its recent days, before it (-1) or after it (1). */
function historyOf(
  day: CalendarDay,
  history: (day: CalendarDay) => StoreFigures | undefined,
  direction: 1 | -1,
): { weekdays: StoreFigures[]; recent: StoreFigures[] } {
  const weekdays: StoreFigures[] = [];
  for (let week = 1; week <= STORE_RULE.weeks; week++) {
    const figuresOf = history(addDays(day, direction * 7 * week));
    if (figuresOf !== undefined) weekdays.push(figuresOf);
  }
  const recent: StoreFigures[] = [];
  for (let offset = 1; offset <= STORE_RULE.recentDays; offset++) {
    const figuresOf = history(addDays(day, direction * offset));
    if (figuresOf !== undefined) recent.push(figuresOf);
  }
  return { weekdays, recent };
}

/** A store's figure of the day next to its baseline: how far from it, on the log scale. */
interface JudgedStore {
  readonly store: string;
  readonly value: number;
  readonly distance: number;
  readonly baseline: Baseline;
}

/**
 * Each store of the day that has a baseline, with its distance from it; stores at zero apart (their log is no
 * distance), as findings already. A function of its own, so that the optimizing compiler takes this loop (run for
 * every store) without the rest of the judgement (run once a day).
 */
function storesAgainstBaselines(
  figures: StoreFigures,
  weekdays: AlignedHistory,
  recent: AlignedHistory,
  found: ReadonlySet<string>,
): { judged: JudgedStore[]; zeros: StoreFinding[] } {
  const judged: JudgedStore[] = [];
  const zeros: StoreFinding[] = [];
  for (let index = 0; index < figures.codes.length; index++) {
    const store = figures.codes[index]!;
    if (found.has(store)) continue;
    const baseline = baselineOf(index, weekdays, recent);
    if (baseline === undefined || baseline.zeros) continue;
    const value = figures.values[index]!;
    if (value <= 0) {
      zeros.push({ ...rangeOf(store, value, baseline), allZero: true });
      continue;
    }
    judged.push({ store, value, distance: Math.log(value) - baseline.median, baseline });
  }
  return { judged, zeros };
}

/** Days of history, and where each store judged stands in each day's list (-1 where it is not). */
interface AlignedHistory {
  readonly days: readonly StoreFigures[];
  readonly positions: readonly Int32Array[];
  /** Each day's figures on the log scale (NaN: zero), as `logsOf` keeps them. */
  readonly logs: readonly Float64Array[];
}

/**
 * The days with each store's place in them: days with the same stores share their list (and `lists` keeps it for
 * the other days), so a store is looked up once a list, not once a day of eight weeks.
 */
function aligned(codes: readonly string[], days: readonly StoreFigures[], lists: Map<readonly string[], Int32Array>): AlignedHistory {
  const positions = days.map((figures) => {
    let placed = lists.get(figures.codes);
    if (placed === undefined) {
      placed = placesIn(codes, figures);
      lists.set(figures.codes, placed);
    }
    return placed;
  });
  return { days, positions, logs: days.map(logsOf) };
}

function placesIn(codes: readonly string[], figures: StoreFigures): Int32Array {
  const places = new Int32Array(codes.length);
  // The same stores in the same order (the usual day: a chain's stores change rarely): each at its own place.
  if (sameCodes(codes, figures.codes)) {
    for (let index = 0; index < codes.length; index++) places[index] = index;
    return places;
  }
  for (let index = 0; index < codes.length; index++) places[index] = figures.indexOf.get(codes[index]!) ?? -1;
  return places;
}

function sameCodes(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/** The baseline of the store at `index` of those judged, if its history is long enough. */
function baselineOf(index: number, weekdays: AlignedHistory, recent: AlignedHistory): Baseline | undefined {
  const sameWeekdays = valuesOf(index, weekdays, SCRATCH.values);
  if (sameWeekdays >= STORE_RULE.minimumSameWeekdays) return robust(SCRATCH.values, sameWeekdays, 'weekday', STORE_RULE.weekdayFloor);
  const recentDays = valuesOf(index, recent, SCRATCH.values);
  if (recentDays >= STORE_RULE.minimumRecentDays) return robust(SCRATCH.values, recentDays, 'recent', STORE_RULE.recentFloor);
  return undefined;
}

/**
 * Arrays the per-store baseline reuses, run for every store every night (20,000 stores: as many arrays a night
 * otherwise); no history is longer than the recent days or, after a day, than the weeks' days.
 */
const SCRATCH = {
  values: new Float64Array(Math.max(STORE_RULE.recentDays, STORE_RULE.weeks)),
  logs: new Float64Array(Math.max(STORE_RULE.recentDays, STORE_RULE.weeks)),
};

/**
 * A history day's figures on the log scale, NaN where a figure is not above zero: made once a day's figures, which
 * judge every later night of eight weeks, instead of once a store a night; kept as long as those figures are.
 */
const LOGS = new WeakMap<Float64Array, Float64Array>();

function logsOf(figures: StoreFigures): Float64Array {
  let logs = LOGS.get(figures.values);
  if (logs === undefined) {
    logs = new Float64Array(figures.values.length);
    for (let index = 0; index < logs.length; index++) {
      const value = figures.values[index]!;
      logs[index] = value > 0 ? Math.log(value) : Number.NaN;
    }
    LOGS.set(figures.values, logs);
  }
  return logs;
}

/** The store's figures in `history`'s days on the log scale (NaN: zero), written into `into`; how many. */
function valuesOf(index: number, history: AlignedHistory, into: Float64Array): number {
  let count = 0;
  for (let day = 0; day < history.days.length; day++) {
    const place = history.positions[day]![index]!;
    if (place >= 0) into[count++] = history.logs[day]![place]!;
  }
  return count;
}

/** The median and spread of the first `count` of `values` (logs, NaN for a zero). */
function robust(values: Float64Array, count: number, basis: Baseline['basis'], floor: number): Baseline {
  let positive = 0;
  for (let index = 0; index < count; index++) if (!Number.isNaN(values[index]!)) positive++;
  // Mostly zeros: zeros are what this store reports (a closed zone, a closed store), not a failure.
  if (positive * 2 <= count) return { median: 0, allowed: 0, basis, zeros: true };
  const logs = SCRATCH.logs;
  let at = 0;
  for (let index = 0; index < count; index++) if (!Number.isNaN(values[index]!)) logs[at++] = values[index]!;
  // Sorted in place for the median, and again for the MAD.
  const median = sortedMedian(logs, positive);
  for (let index = 0; index < positive; index++) logs[index] = Math.abs(logs[index]! - median);
  const mad = sortedMedian(logs, positive);
  return { median, allowed: Math.max(floor, STORE_RULE.mads * MAD_SCALE * mad), basis, zeros: false };
}

function rangeOf(store: string, value: number, baseline: Baseline): StoreFinding {
  const round = (figure: number): number => Number(figure.toPrecision(4));
  return {
    store,
    // Six significant digits, as a day's total is shown.
    value: Number(value.toPrecision(6)),
    median: round(Math.exp(baseline.median)),
    low: round(Math.exp(baseline.median - baseline.allowed)),
    high: round(Math.exp(baseline.median + baseline.allowed)),
    basis: baseline.basis,
  };
}

/**
 * When most judged stores moved by about the same factor, and that factor is beyond the floor, the day is one
 * suspicion: a store's own failure does not move the others. Stores at zero count as judged but not as moved.
 */
function batchOf(distances: readonly number[], judged: number, floor: number): BatchFinding | undefined {
  if (distances.length < STORE_RULE.batchMinimumStores) return undefined;
  const common = medianOf(distances);
  if (Math.abs(common) <= floor) return undefined;
  const together = distances.filter((distance) => Math.abs(distance - common) <= STORE_RULE.batchSpread).length;
  if (together < STORE_RULE.batchShare * judged) return undefined;
  return { factor: Number(Math.exp(common).toPrecision(3)), stores: together, judged };
}

function medianOf(values: readonly number[]): number {
  const sorted = Float64Array.from(values);
  return sortedMedian(sorted, sorted.length);
}

/** Up to this many values an insertion sort is faster than the typed array's own (a store's eight weeks). */
const SMALL_SORT = 32;

/** The median of the first `count` of `values`, which it sorts in place. */
function sortedMedian(values: Float64Array, count: number): number {
  if (count > SMALL_SORT) values.subarray(0, count).sort();
  else
    for (let index = 1; index < count; index++) {
      const value = values[index]!;
      let at = index - 1;
      for (; at >= 0 && values[at]! > value; at--) values[at + 1] = values[at]!;
      values[at + 1] = value;
    }
  const middle = count >> 1;
  return count % 2 === 1 ? values[middle]! : (values[middle - 1]! + values[middle]!) / 2;
}
