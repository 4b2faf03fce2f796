import { addDays, daysFrom, today, type CalendarDay } from '../window/days.js';

const DAY_MS = 86_400_000;

/**
 * Whether a day's data is final even if some stores never reported (`--settle-days`): it is at least `settleDays`
 * days old (yesterday is 1 day old). A store that closed must not hold the state back for ever.
 */
export function isPastSettleDays(day: CalendarDay, settleDays: number, now: Date): boolean {
  return daysFrom(day, today(now)) >= settleDays;
}

/**
 * Whether a day that has no results yet is given up: its window ended `giveUpDays` days ago or more (the window of D
 * ends at the start of D+1).
 */
export function shouldGiveUp(day: CalendarDay, giveUpDays: number, now: Date): boolean {
  return now.getTime() - Date.parse(`${addDays(day, 1)}T00:00:00Z`) >= giveUpDays * DAY_MS;
}
