import { UsageError } from '../errors.js';
import { civilFromDays, daysFromCivil } from './civil-day.js';

/**
 * A calendar day as `YYYY-MM-DD`: a UTC day or, with `--days local`, the same date in each store's own time zone
 * (the day mode says which).
 */
export type CalendarDay = string;

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

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

/**
 * The day's number since 1970-01-01, read from its digits: day arithmetic runs for every day of every range of a
 * state's write and every store's history, where making a Date and its ISO text for each day was the cost.
 */
export function epochDayOf(day: CalendarDay): number {
  const number = daysFromCivil(Number(day.slice(0, 4)), Number(day.slice(5, 7)), Number(day.slice(8, 10)));
  if (day.length !== 10 || !Number.isInteger(number)) throw new RangeError(`not a calendar day: ${day}`);
  return number;
}

/** The `YYYY-MM-DD` of a day's number since 1970-01-01. */
export function dayOfEpochDay(number: number): CalendarDay {
  const { year, month, day } = civilFromDays(number);
  return `${String(year).padStart(4, '0')}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`;
}

export function addDays(day: CalendarDay, days: number): CalendarDay {
  return dayOfEpochDay(epochDayOf(day) + days);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysFrom(from: CalendarDay, to: CalendarDay): number {
  return epochDayOf(to) - epochDayOf(from);
}

/** Every day from `from` through `to`, inclusive. */
export function daysBetween(from: CalendarDay, to: CalendarDay): CalendarDay[] {
  const days: CalendarDay[] = [];
  for (let number = epochDayOf(from), last = epochDayOf(to); number <= last; number++) days.push(dayOfEpochDay(number));
  return days;
}
