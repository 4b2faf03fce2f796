import { UsageError } from '../errors.js';
import { defaultDay, startsInFuture, type DayMode } from './day-mode.js';

/**
 * A calendar day as `YYYY-MM-DD`: a UTC day or, with `--days local`, the same date in each store's own time zone
 * (the day mode says which).
 */
export type CalendarDay = string;

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
export function parseDay(value: string, flag: string): CalendarDay {
  if (!isValidDay(value)) {
    throw new UsageError(`${flag} ${JSON.stringify(value)} is not a valid date; use YYYY-MM-DD, e.g. 2026-11-20`);
  }
  return value;
}

export function today(now: Date): CalendarDay {
  return now.toISOString().slice(0, 10);
}

export function yesterday(now: Date): CalendarDay {
  return addDays(today(now), -1);
}

export function addDays(day: CalendarDay, days: number): CalendarDay {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysFrom(from: CalendarDay, to: CalendarDay): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** Every day from `from` through `to`, inclusive. */
export function daysBetween(from: CalendarDay, to: CalendarDay): CalendarDay[] {
  const days: CalendarDay[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
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
export function resolveDays(request: WindowRequest, now: Date, mode: DayMode = 'utc'): CalendarDay[] {
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

function notInFuture(day: CalendarDay, flag: string, now: Date, mode: DayMode): CalendarDay {
  if (startsInFuture(day, mode, now)) {
    const what = mode === 'utc' ? `today is ${today(now)} UTC` : `its window starts at ${addDays(day, -1)}T10:00:00Z`;
    throw new UsageError(`${flag} ${day} is in the future (${what}); the vendor has no data for it yet`);
  }
  return day;
}
