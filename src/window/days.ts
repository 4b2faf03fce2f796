import { DateTime } from 'luxon';
import { UsageError } from '../errors.js';

/** A calendar day in UTC, as `YYYY-MM-DD`. */
export type UtcDay = string;

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** Parses a `YYYY-MM-DD` flag value strictly: `2026-02-30` and `2026-2-3` are usage errors. */
export function parseDay(value: string, flag: string): UtcDay {
  const parsed = DAY_PATTERN.test(value) ? DateTime.fromISO(value, { zone: 'utc' }) : undefined;
  if (!parsed?.isValid) {
    throw new UsageError(`${flag} ${JSON.stringify(value)} is not a valid date; use YYYY-MM-DD, e.g. 2026-11-20`);
  }
  return parsed.toISODate() as UtcDay;
}

export function yesterday(now: Date): UtcDay {
  return DateTime.fromJSDate(now, { zone: 'utc' }).startOf('day').minus({ days: 1 }).toISODate() as UtcDay;
}

export function addDays(day: UtcDay, days: number): UtcDay {
  return DateTime.fromISO(day, { zone: 'utc' }).plus({ days }).toISODate() as UtcDay;
}

/** Every day from `from` through `to`, inclusive. */
export function daysBetween(from: UtcDay, to: UtcDay): UtcDay[] {
  const days: UtcDay[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The API's inclusive filters for one UTC day (SPEC 2.2). */
export function utcDayBounds(day: UtcDay): { gte: string; lte: string } {
  return { gte: `${day}T00:00:00Z`, lte: `${day}T23:59:59Z` };
}

export type WindowRequest =
  | { readonly kind: 'default' }
  | { readonly kind: 'date'; readonly date: string }
  | { readonly kind: 'range'; readonly from: string; readonly to?: string }
  | { readonly kind: 'catch-up'; readonly lastCompleteDay: UtcDay | undefined; readonly maxDays: number };

/**
 * The UTC days a run imports. No window means yesterday; `--catch-up` means every day after the last complete
 * one through yesterday, at most `maxDays` (the oldest first, so state advances day by day).
 */
export function resolveDays(request: WindowRequest, now: Date): UtcDay[] {
  const last = yesterday(now);
  switch (request.kind) {
    case 'default':
      return [last];
    case 'date':
      return [parseDay(request.date, '--date')];
    case 'range': {
      const from = parseDay(request.from, '--from');
      const to = request.to === undefined ? from : parseDay(request.to, '--to');
      if (from > to) throw new UsageError(`--from ${from} is after --to ${to}; swap them`);
      return daysBetween(from, to);
    }
    case 'catch-up': {
      if (request.lastCompleteDay === undefined) return [last];
      const first = addDays(request.lastCompleteDay, 1);
      if (first > last) return [];
      const days = daysBetween(first, last);
      return days.slice(0, request.maxDays);
    }
  }
}
