import { addDays, type CalendarDay } from './days.js';

/**
 * What a day is: `utc`, the vendor's own windowing (a UTC day's window, whatever local days its results carry), or
 * `local`, a store-local calendar day (every result of the file has that `day`, and every store's day is in it).
 */
export type DayMode = 'utc' | 'local';

export const DAY_MODES = ['utc', 'local'] as const satisfies readonly DayMode[];

const HOUR_MS = 3_600_000;

/**
 * A result's local day has ended once its `date` (the store's local midnight) is this far in the past: 24 h, plus one
 * for a day that changes to or from daylight saving time.
 */
export const LOCAL_DAY_END_MS = 25 * HOUR_MS;

/** The API's inclusive filters for a day. */
export interface DayWindow {
  readonly gte: string;
  readonly lte: string;
}

/**
 * The window a day is requested with. A UTC day is its own 24 hours. A local day D is the one window that holds every
 * offset's midnight of D: from D's midnight at +14:00, (D-1)T10:00Z, to D's midnight at -12:00, DT12:00Z.
 */
export function dayWindow(day: CalendarDay, mode: DayMode): DayWindow {
  return mode === 'utc'
    ? { gte: `${day}T00:00:00Z`, lte: `${day}T23:59:59Z` }
    : { gte: `${addDays(day, -1)}T10:00:00Z`, lte: `${day}T12:00:00Z` };
}

/** When a day's window ends: the instant after its inclusive upper bound. */
export function windowEnd(day: CalendarDay, mode: DayMode): number {
  return Date.parse(dayWindow(day, mode).lte) + 1000;
}

/**
 * When every local day a window can hold has ended: the latest local midnight it can hold is its upper bound, and
 * that local day has ended LOCAL_DAY_END_MS later. Before this instant the day is not over, whatever its data says.
 */
export function overAt(day: CalendarDay, mode: DayMode): number {
  return Date.parse(dayWindow(day, mode).lte) + LOCAL_DAY_END_MS;
}

/**
 * The day a run with no window imports: yesterday (UTC) in UTC mode, as cron expects; in local mode the latest local
 * day that has ended in every offset, -12:00 included.
 */
export function defaultDay(mode: DayMode, now: Date): CalendarDay {
  const today = now.toISOString().slice(0, 10);
  if (mode === 'utc') return addDays(today, -1);
  let day = addDays(today, -1);
  while (overAt(day, 'local') > now.getTime()) day = addDays(day, -1);
  return day;
}

/** In local mode, whether a result's `day` may be in the window at all: the day itself or a neighbour. */
export function isDayOrNeighbour(day: CalendarDay, resultDay: string): boolean {
  return resultDay === day || resultDay === addDays(day, -1) || resultDay === addDays(day, 1);
}

/**
 * The local day a result belongs to: the calendar date of its `date`, which is the store's local midnight written
 * with its offset (`2026-11-22T00:00:00+13:00` is local day 2026-11-22).
 */
export function localDayOf(date: string): string {
  return date.slice(0, 10);
}

/**
 * Whether a day is still not over at `now`: some local day its window can hold has not ended yet. Such a day may be
 * imported, but its data is provisional.
 */
export function isNotOver(day: CalendarDay, mode: DayMode, now: Date): boolean {
  return now.getTime() < overAt(day, mode);
}

/** Whether a day's window starts after `now`: the vendor has nothing for it yet, so it is refused before any request. */
export function startsInFuture(day: CalendarDay, mode: DayMode, now: Date): boolean {
  return Date.parse(dayWindow(day, mode).gte) > now.getTime();
}
