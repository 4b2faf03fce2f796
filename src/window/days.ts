import { UsageError } from '../errors.js';

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

/** The API's inclusive filters for one UTC day. */
export function utcDayBounds(day: UtcDay): { gte: string; lte: string } {
  return { gte: `${day}T00:00:00Z`, lte: `${day}T23:59:59Z` };
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
 * The UTC days an explicit window names; no window means yesterday. A day after today (UTC) has no data yet and is
 * refused before any request; today may be imported (it is never recorded complete).
 */
export function resolveDays(request: WindowRequest, now: Date): UtcDay[] {
  switch (request.kind) {
    case 'default':
      return [yesterday(now)];
    case 'date':
      return [notInFuture(parseDay(request.date, '--date'), '--date', now)];
    case 'range': {
      const from = parseDay(request.from, '--from');
      const to = request.to === undefined ? from : parseDay(request.to, '--to');
      if (from > to) throw new UsageError(`--from ${from} is after --to ${to}; swap them`);
      notInFuture(to, request.to === undefined ? '--from' : '--to', now);
      return daysBetween(from, to);
    }
  }
}

function notInFuture(day: UtcDay, flag: string, now: Date): UtcDay {
  const current = today(now);
  if (day > current) {
    throw new UsageError(`${flag} ${day} is in the future (today is ${current} UTC); the vendor has no data for it yet`);
  }
  return day;
}

/** What `--catch-up` does for one metric. */
export interface CatchUpPlan {
  /** Days to import, oldest first: the look-back days, then the missing days this run takes. */
  readonly days: UtcDay[];
  /** The complete days re-imported before the first missing one (`--lookback`). */
  readonly lookbackDays: number;
  /** Set when `--max-days` cut the missing days: the first and last day left for a later run, and how many. */
  readonly left?: { readonly from: UtcDay; readonly to: UtcDay; readonly count: number };
}

/**
 * Every day after `lastCompleteDay` through yesterday, at most `maxDays` of them (oldest first, so the state advances
 * day by day), preceded by `lookback` complete days to pick up late corrections. No last complete day means
 * yesterday only: how far back to go is a backfill's decision, not a guess.
 */
export function catchUpDays(
  lastCompleteDay: UtcDay | undefined,
  options: { readonly maxDays: number; readonly lookback: number },
  now: Date,
): CatchUpPlan {
  const last = yesterday(now);
  if (lastCompleteDay === undefined) return { days: [last], lookbackDays: 0 };
  const first = addDays(lastCompleteDay, 1);
  const missing = first > last ? [] : daysBetween(first, last);
  const taken = missing.slice(0, options.maxDays);
  const lookback = options.lookback === 0 ? [] : daysBetween(addDays(first, -options.lookback), lastCompleteDay);
  const rest = missing.slice(options.maxDays);
  return {
    days: [...lookback, ...taken],
    lookbackDays: lookback.length,
    ...(rest.length > 0 ? { left: { from: rest[0]!, to: rest.at(-1)!, count: rest.length } } : {}),
  };
}
