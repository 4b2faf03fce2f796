import { UsageError } from '../errors.js';
import { defaultDay, startsInFuture, type DayMode } from './day-mode.js';

/** A calendar day in UTC, as `YYYY-MM-DD`. */
export type UtcDay = string;

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** Whether `value` is a `YYYY-MM-DD` day that exists (`2026-02-30` and `2026-2-3` are not). */
export function isValidDay(value: string): boolean {
  // Date rolls an impossible day over (02-30 becomes 03-02), so a day that exists comes back unchanged.
  if (!DAY_PATTERN.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}

/** Parses a `YYYY-MM-DD` flag value strictly: `2026-02-30` and `2026-2-3` are usage errors. */
export function parseDay(value: string, flag: string): UtcDay {
  if (!isValidDay(value)) {
    throw new UsageError(`${flag} ${JSON.stringify(value)} is not a valid date; use YYYY-MM-DD, e.g. 2026-11-20`);
  }
  return value;
}

export function today(now: Date): UtcDay {
  return now.toISOString().slice(0, 10);
}

export function yesterday(now: Date): UtcDay {
  return addDays(today(now), -1);
}

export function addDays(day: UtcDay, days: number): UtcDay {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysFrom(from: UtcDay, to: UtcDay): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** Every day from `from` through `to`, inclusive. */
export function daysBetween(from: UtcDay, to: UtcDay): UtcDay[] {
  const days: UtcDay[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

/**
 * Whether a day's data is final even if some stores never reported: it is at least `settleDays` days old (yesterday
 * is 1 day old). A store that closed must not hold the state back for ever.
 */
export function isSettled(day: UtcDay, settleDays: number, now: Date): boolean {
  return daysFrom(day, today(now)) >= settleDays;
}

export type WindowRequest =
  | { readonly kind: 'default' }
  | { readonly kind: 'date'; readonly date: string }
  | { readonly kind: 'range'; readonly from: string; readonly to?: string };

/**
 * The days an explicit window names (UTC days, or store-local days in local mode); no window means the mode's default
 * day. A day whose window starts after now has no data yet and is refused before any request; a day that has started
 * may be imported (it is not recorded complete before it is over).
 */
export function resolveDays(request: WindowRequest, now: Date, mode: DayMode = 'utc'): UtcDay[] {
  switch (request.kind) {
    case 'default':
      return [defaultDay(mode, now)];
    case 'date':
      return [notInFuture(parseDay(request.date, '--date'), '--date', now, mode)];
    case 'range': {
      const from = parseDay(request.from, '--from');
      const to = request.to === undefined ? from : parseDay(request.to, '--to');
      if (from > to) throw new UsageError(`--from ${from} is after --to ${to}; swap them`);
      notInFuture(to, request.to === undefined ? '--from' : '--to', now, mode);
      return daysBetween(from, to);
    }
  }
}

function notInFuture(day: UtcDay, flag: string, now: Date, mode: DayMode): UtcDay {
  if (startsInFuture(day, mode, now)) {
    const what = mode === 'utc' ? `today is ${today(now)} UTC` : `its window starts at ${addDays(day, -1)}T10:00:00Z`;
    throw new UsageError(`${flag} ${day} is in the future (${what}); the vendor has no data for it yet`);
  }
  return day;
}

/** What `--catch-up` does for one metric. */
export interface CatchUpPlan {
  /** Days to import, oldest first: look-back, pending and new days together. */
  readonly days: UtcDay[];
  /** The complete days re-imported for late corrections (`--lookback`). */
  readonly lookback: UtcDay[];
  /** Pending days retried in this run. */
  readonly pending: UtcDay[];
  /** Days after the last settled one, taken in this run. */
  readonly fresh: UtcDay[];
  /** Set when `--max-days` cut the new days: the first and last day left for a later run, and how many. */
  readonly freshLeft?: { readonly from: UtcDay; readonly to: UtcDay; readonly count: number };
  /** Pending days left for a later run by `--max-days`. */
  readonly pendingLeft?: number;
}

/** What catch-up needs of a metric's coverage. */
export interface CatchUpCoverage {
  /** The complete days, oldest first (look-back takes the latest). */
  readonly complete: readonly UtcDay[];
  /** The latest day that is complete, accepted or given up: new days start after it. */
  readonly settledThrough: UtcDay | undefined;
  /** Days asked for before and not final yet, oldest first (given-up days are not among them). */
  readonly pending: readonly UtcDay[];
}

/**
 * The pending days, and every day after the last settled one through the mode's default day (yesterday in UTC mode,
 * the latest local day over everywhere in local mode): a pending day never holds later days
 * back. `maxDays` bounds each of the two, oldest first (pending days that wait are retried by the next run, new days
 * continue where this run stopped). `lookback` adds the latest complete days, for late corrections. No coverage means
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
  const pending = pendingAll.slice(0, options.maxDays);
  const lookback = options.lookback === 0 ? [] : coverage.complete.slice(-options.lookback);
  const freshRest = freshAll.slice(options.maxDays);
  return {
    days: [...new Set([...lookback, ...pending, ...fresh])].sort(),
    lookback,
    pending,
    fresh,
    ...(freshRest.length > 0 ? { freshLeft: { from: freshRest[0]!, to: freshRest.at(-1)!, count: freshRest.length } } : {}),
    ...(pendingAll.length > pending.length ? { pendingLeft: pendingAll.length - pending.length } : {}),
  };
}

/**
 * Whether a day that has no results yet is given up: its window ended `giveUpDays` days ago or more (the window of D
 * ends at the start of D+1).
 */
export function shouldGiveUp(day: UtcDay, giveUpDays: number, now: Date): boolean {
  return now.getTime() - Date.parse(`${addDays(day, 1)}T00:00:00Z`) >= giveUpDays * DAY_MS;
}
