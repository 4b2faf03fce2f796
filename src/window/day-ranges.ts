import { addDays, daysBetween, type CalendarDay } from './days.js';

/** Inclusive runs of consecutive days, `[first, last]`, sorted and disjoint: how a long coverage stays small. */
export type DayRange = [CalendarDay, CalendarDay];

/** Every day the ranges hold, oldest first. */
export function daysOfRanges(ranges: readonly DayRange[]): CalendarDay[] {
  return ranges.flatMap(([first, last]) => daysBetween(first, last));
}

/** The days as sorted, merged ranges (duplicates and any order welcome). */
export function rangesOfDays(days: Iterable<CalendarDay>): DayRange[] {
  const sorted = [...new Set(days)].sort();
  const ranges: DayRange[] = [];
  for (const day of sorted) {
    const current = ranges.at(-1);
    if (current !== undefined && addDays(current[1], 1) === day) current[1] = day;
    else ranges.push([day, day]);
  }
  return ranges;
}

export function rangesHold(ranges: readonly DayRange[], day: CalendarDay): boolean {
  return ranges.some(([first, last]) => first <= day && day <= last);
}

/**
 * The ranges with the days added, merged range by range: a unit's write adds a day to a coverage of years, which is
 * not spelled out day by day for that. Ranges in any order, overlapping or touching, come back sorted and merged.
 */
export function withDays(ranges: readonly DayRange[], days: Iterable<CalendarDay>): DayRange[] {
  const sorted = [...ranges, ...rangesOfDays(days)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const merged: DayRange[] = [];
  for (const [first, last] of sorted) {
    const current = merged.at(-1);
    if (current !== undefined && addDays(current[1], 1) >= first) {
      if (last > current[1]) current[1] = last;
    } else {
      merged.push([first, last]);
    }
  }
  return merged;
}

export function withoutDays(ranges: readonly DayRange[], days: Iterable<CalendarDay>): DayRange[] {
  const removed = new Set(days);
  return rangesOfDays(daysOfRanges(ranges).filter((day) => !removed.has(day)));
}

/** `2026-11-01..2026-11-03`, or the one day. */
export function describeRange([first, last]: DayRange): string {
  return first === last ? first : `${first}..${last}`;
}

/** `2026-11-01..2026-11-03, 2026-11-05`: any days, as their ranges. */
export function describeDays(days: Iterable<CalendarDay>): string {
  return rangesOfDays(days).map(describeRange).join(', ');
}
