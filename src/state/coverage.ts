import { rangesHold, type DayRange } from '../window/day-ranges.js';
import { daysBetween, type CalendarDay } from '../window/days.js';
import type { PendingDay } from './storage/versions/current.js';

/** The days of one key in each list; every day is in at most one of them. */
export interface DayLists {
  readonly complete?: readonly DayRange[];
  readonly accepted?: readonly DayRange[];
  readonly givenUp?: readonly DayRange[];
}

/** One key's coverage as read: every day is in at most one of complete, accepted, given up and pending. */
export interface KeyCoverage {
  readonly complete: readonly DayRange[];
  readonly accepted: readonly DayRange[];
  readonly givenUp: readonly DayRange[];
  readonly pending: readonly { readonly day: CalendarDay; readonly status: PendingDay }[];
}

/** A key's lists as the state keeps them (a list left out is empty; pending days by day), as coverage reads them. */
export function keyCoverageOf(entry: DayLists & { readonly pending?: Readonly<Record<CalendarDay, PendingDay>> }): KeyCoverage {
  const pending = entry.pending ?? {};
  return {
    complete: entry.complete ?? [],
    accepted: entry.accepted ?? [],
    givenUp: entry.givenUp ?? [],
    pending: Object.keys(pending)
      .sort()
      .map((day) => ({ day, status: pending[day]! })),
  };
}

/**
 * Final: complete (its data is final) or accepted (a person said so). A final day is not asked for again by
 * `--catch-up`, nor made pending by a later import; only `reopen` does that.
 */
export function isFinal(lists: DayLists, day: CalendarDay): boolean {
  return rangesHold(lists.complete ?? [], day) || rangesHold(lists.accepted ?? [], day);
}

/**
 * The latest final day (complete or accepted): how far the data is. `status` counts the days behind from it, since a
 * given-up day is no data.
 */
export function latestFinal(coverage: KeyCoverage): CalendarDay | undefined {
  return latestOf([coverage.complete, coverage.accepted]);
}

/**
 * The latest settled day: complete, accepted or given up, the days `--catch-up` is done with. New days start after
 * it; a given-up day counts, or the next run would ask for it again as a new day.
 */
export function latestSettled(coverage: KeyCoverage): CalendarDay | undefined {
  return latestOf([coverage.complete, coverage.accepted, coverage.givenUp]);
}

/** The earliest day the state knows of (final, given up or pending): where the key's coverage starts. */
export function firstKnownDay(coverage: KeyCoverage): CalendarDay | undefined {
  return [...coverage.complete, ...coverage.accepted, ...coverage.givenUp]
    .map(([first]) => first)
    .concat(coverage.pending.map(({ day }) => day))
    .sort()[0];
}

/**
 * The gaps: days from where coverage starts to the latest final day that are not final (pending and given-up days
 * among them), and every suspect day, wherever it lies: data the importer holds but does not trust.
 */
export function gapDays(coverage: KeyCoverage): CalendarDay[] {
  const first = firstKnownDay(coverage);
  const last = latestFinal(coverage);
  const inside = first === undefined || last === undefined ? [] : daysBetween(first, last).filter((day) => !isFinal(coverage, day));
  const suspect = coverage.pending.filter(({ status }) => status.reason === 'suspect').map(({ day }) => day);
  return [...new Set([...inside, ...suspect])].sort();
}

function latestOf(lists: readonly (readonly DayRange[])[]): CalendarDay | undefined {
  return lists
    .map((ranges) => ranges.at(-1)?.[1])
    .filter((day): day is CalendarDay => day !== undefined)
    .sort()
    .at(-1);
}
