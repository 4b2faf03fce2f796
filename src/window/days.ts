import { UsageError } from '../errors.js';

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
