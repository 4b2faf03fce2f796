import { UsageError } from '../errors.js';
import { parseDay, type CalendarDay } from '../window/days.js';
import type { WindowRequest } from '../window/requested-days.js';
import { valueOption, type Parser } from './options.js';

const day: Parser<CalendarDay> = (value, source) => parseDay(value, source);

/** `--date`, `--from` and `--to` as the import commands declare them; `accept` and `reopen` reword only the help. */
export const WINDOW_OPTIONS = {
  date: valueOption({
    flags: '--date <YYYY-MM-DD>',
    parse: day,
    description: 'one day (default: yesterday, UTC; with --days local the latest local day over everywhere)',
  }),
  from: valueOption({ flags: '--from <YYYY-MM-DD>', parse: day, description: 'first day of a range (backfill)' }),
  to: valueOption({ flags: '--to <YYYY-MM-DD>', parse: day, defaultText: '--from', description: 'last day of the range, inclusive' }),
};

/**
 * The days `--date D` or `--from D1 [--to D2]` name, the same rules for every command; undefined when neither is
 * given. (That no day is in the future is `resolveDays`'s to say, with the run's clock.)
 */
export function windowFromFlags(flags: {
  readonly date: CalendarDay | undefined;
  readonly from: CalendarDay | undefined;
  readonly to: CalendarDay | undefined;
}): WindowRequest | undefined {
  const { date, from, to } = flags;
  if (date !== undefined && (from !== undefined || to !== undefined)) {
    throw new UsageError('--date cannot be combined with --from/--to; use one or the other');
  }
  if (to !== undefined && from === undefined) throw new UsageError('--to needs --from');
  if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from ${from} is after --to ${to}; swap them`);
  if (date !== undefined) return { kind: 'date', date };
  return from === undefined ? undefined : { kind: 'range', from, ...(to === undefined ? {} : { to }) };
}
