import { UsageError } from '../../errors.js';
import { describeDays } from '../../window/day-ranges.js';
import { isNotOver, overAt, windowEnd, type DayMode } from '../../window/day-mode.js';
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

/** When a day is over, as the warnings and refusals say it: `2026-11-24T00:59:59Z`. */
export function overAtText(day: CalendarDay, mode: DayMode): string {
  return new Date(overAt(day, mode)).toISOString().replace('.000Z', 'Z');
}

/**
 * `accept` is a person's word that a day's numbers are final. A day not over yet may still change (a store's local
 * day in it has not ended), and it becomes final by itself with the first `--catch-up` after it is over: accepting it
 * would make a partial day final for good. Refused before anything changes, saying when it will be over.
 */
export function refuseAcceptBeforeOver(days: readonly CalendarDay[], mode: DayMode, now: Date): void {
  const notOver = days.filter((day) => isNotOver(day, mode, now));
  const last = notOver.at(-1);
  if (last === undefined) return;
  throw new UsageError(
    `${describeDays(notOver)}: not over until ${overAtText(last, mode)}, when the last store's local day in it ends: ` +
      'nothing accepted; the first --catch-up after that records it final by itself',
  );
}
