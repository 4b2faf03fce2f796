import { windowEnd } from '../../window/day-mode.js';
import { daysFrom, today, type CalendarDay } from '../../window/days.js';

const DAY_MS = 86_400_000;

/**
 * Whether a day's data is final even if some stores never reported (`--settle-days`): it is at least `settleDays`
 * days old (yesterday is 1 day old). A store that closed must not hold the state back for ever.
 */
export function isPastSettleDays(day: CalendarDay, settleDays: number, now: Date): boolean {
  return daysFrom(day, today(now)) >= settleDays;
}

/**
 * Whether a day that has no results yet is given up: the UTC day's window ended `giveUpDays` days ago or more
 * (counted from the UTC day's end in both day modes, so `--give-up-days` means the same whichever a folder keeps).
 */
export function shouldGiveUp(day: CalendarDay, giveUpDays: number, now: Date): boolean {
  return now.getTime() - windowEnd(day, 'utc') >= giveUpDays * DAY_MS;
}
