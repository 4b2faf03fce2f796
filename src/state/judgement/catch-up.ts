import { daysOfRanges } from '../../window/day-ranges.js';
import { addDays, daysBetween, type CalendarDay } from '../../window/days.js';
import { defaultDay, type DayMode } from '../../window/day-mode.js';
import { latestSettled } from '../coverage.js';
import type { ImportState } from '../import-state.js';
import { stateKey } from '../keys.js';

/** `--catch-up` as the flags give it. */
export interface CatchUpRequest {
  readonly kind: 'catch-up';
  readonly maxDays: number;
  readonly lookback: number;
}

/** What `--catch-up` does for one metric. */
export interface CatchUpPlan {
  /** Days to import, oldest first: look-back, pending and new days together. */
  readonly days: CalendarDay[];
  /** The complete days re-imported for late corrections (`--lookback`). */
  readonly lookback: CalendarDay[];
  /** Pending days retried in this run. */
  readonly pending: CalendarDay[];
  /** Days after the latest settled one, taken in this run. */
  readonly fresh: CalendarDay[];
  /** Set when `--max-days` cut the new days: the first and last day left for a later run, and how many. */
  readonly freshLeft?: { readonly from: CalendarDay; readonly to: CalendarDay; readonly count: number };
  /** Pending days left for a later run by `--max-days` (held suspect days apart). */
  readonly pendingLeft?: number;
  /** Held suspect days among `pending`, and those left for the next nights (at most `SUSPECT_REFETCHES` a run). */
  readonly heldRetried?: number;
  readonly heldLeft?: number;
}

/** What catch-up needs of a metric's coverage. */
export interface CatchUpCoverage {
  /** The complete days, oldest first (look-back takes the latest). */
  readonly complete: readonly CalendarDay[];
  /** The latest settled day (complete, accepted or given up): new days start after it. */
  readonly settledThrough: CalendarDay | undefined;
  /** Days asked for before and not final yet, oldest first (given-up days are not among them). */
  readonly pending: readonly CalendarDay[];
  /** Those of them held as suspect: their data came, it looked wrong; fetched again only a few a night. */
  readonly suspect?: ReadonlySet<CalendarDay>;
}

/**
 * How many held suspect days one run fetches again (a vendor's correction comes within days, or a person settles
 * the day), taken in turns night by night so that every held day is fetched again within a few nights.
 */
export const SUSPECT_REFETCHES = 7;

/**
 * The pending days, and every day after the latest settled one through the mode's default day (yesterday in UTC mode,
 * the latest local day over everywhere in local mode): a pending day never holds later days
 * back. `maxDays` bounds each of the two, oldest first (pending days that wait are retried by the next run, new days
 * continue where this run stopped); among pending days, those held as suspect come last and at most
 * `SUSPECT_REFETCHES` a run. `lookback` adds the latest complete days, for late corrections. No coverage means
 * yesterday only: how far back to go is a backfill's decision, not a guess.
 */
export function catchUpDays(
  coverage: CatchUpCoverage,
  options: { readonly maxDays: number; readonly lookback: number },
  now: Date,
  mode: DayMode = 'utc',
): CatchUpPlan {
  const last = defaultDay(mode, now);
  const pendingAll = coverage.pending.filter((day) => day <= last);
  const waiting = new Set(pendingAll);
  const first = coverage.settledThrough === undefined ? last : addDays(coverage.settledThrough, 1);
  const freshAll = first > last ? [] : daysBetween(first, last).filter((day) => !waiting.has(day));
  const fresh = freshAll.slice(0, options.maxDays);
  // Days pending for other reasons (not over, not published, partly published, failed) first: held days never starve them.
  const othersAll = pendingAll.filter((day) => !coverage.suspect?.has(day));
  const others = othersAll.slice(0, options.maxDays);
  const held = pendingAll.filter((day) => coverage.suspect?.has(day));
  const room = Math.min(SUSPECT_REFETCHES, options.maxDays - others.length, held.length);
  const turn = held.length === 0 ? 0 : (Math.floor(now.getTime() / 86_400_000) * SUSPECT_REFETCHES) % held.length;
  const heldTaken = Array.from({ length: Math.max(0, room) }, (_, index) => held[(turn + index) % held.length]!);
  const pending = [...others, ...heldTaken].sort();
  const lookback = options.lookback === 0 ? [] : coverage.complete.slice(-options.lookback);
  const freshRest = freshAll.slice(options.maxDays);
  return {
    days: [...new Set([...lookback, ...pending, ...fresh])].sort(),
    lookback,
    pending,
    fresh,
    ...(freshRest.length > 0 ? { freshLeft: { from: freshRest[0]!, to: freshRest.at(-1)!, count: freshRest.length } } : {}),
    ...(othersAll.length > others.length ? { pendingLeft: othersAll.length - others.length } : {}),
    ...(heldTaken.length > 0 ? { heldRetried: heldTaken.length } : {}),
    ...(held.length > heldTaken.length ? { heldLeft: held.length - heldTaken.length } : {}),
  };
}

export interface MetricCatchUp<M extends string = string> extends CatchUpPlan {
  readonly metric: M;
}

/**
 * `--catch-up` for each metric on its own, from its own coverage: its pending days and the days after its latest
 * settled one. A metric with a gap is caught up even when another has no state yet (which starts at yesterday).
 */
export function catchUpFrom<M extends string>(
  state: ImportState | undefined,
  metrics: readonly M[],
  storeCodes: readonly string[],
  options: { readonly maxDays: number; readonly lookback: number },
  now: Date,
  mode: DayMode = 'utc',
): MetricCatchUp<M>[] {
  return metrics.map((metric) => {
    const coverage = state?.coverage(stateKey(metric, storeCodes));
    return {
      metric,
      ...catchUpDays(
        {
          complete: daysOfRanges(coverage?.complete ?? []),
          settledThrough: coverage === undefined ? undefined : latestSettled(coverage),
          pending: (coverage?.pending ?? []).map(({ day }) => day),
          suspect: new Set((coverage?.pending ?? []).filter(({ status }) => status.reason === 'suspect').map(({ day }) => day)),
        },
        options,
        now,
        mode,
      ),
    };
  });
}
