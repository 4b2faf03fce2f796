import { UsageError } from '../errors.js';
import { defaultDay, startsInFuture, type DayMode } from './day-mode.js';
import { addDays, daysBetween, parseDay, today, type CalendarDay } from './days.js';

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
