import { z } from 'zod';
import { daysBetween, type CalendarDay } from '../window/days.js';
import { keyCoverageOf, type KeyCoverage } from './coverage.js';
import type { ImportState } from './import-state.js';
import { metricOfKey } from './keys.js';
import type { PendingDay } from './storage/versions/current.js';
import { rangeSchema } from './storage/versions/parts.js';
import { PENDING_REASONS } from './storage/versions/v4.js';

/**
 * A day's status as loaders and dashboards read it: `complete` and `accepted` are final, `pending` waits for its
 * `reason`, `held` is pending as suspect (complete data whose numbers look wrong), `given-up` never came.
 */
export const COVERAGE_STATUSES = ['complete', 'accepted', 'pending', 'held', 'given-up'] as const;
export type CoverageStatus = (typeof COVERAGE_STATUSES)[number];

/** The state's lists of day ranges and the status each gives its days. */
export const RANGE_STATUSES = [
  { list: 'complete', status: 'complete' },
  { list: 'accepted', status: 'accepted' },
  { list: 'givenUp', status: 'given-up' },
] as const satisfies readonly { list: keyof KeyCoverage; status: CoverageStatus }[];

/** The pending reason that makes a day `held` rather than `pending`. */
export const HELD_REASON: PendingDay['reason'] = 'suspect';

/** One day of one state key, from the state alone. */
export interface CoverageDay {
  readonly metric: string;
  /** The stores of a `--store` key (`A,B`), null for the whole metric. */
  readonly stores: string | null;
  readonly day: CalendarDay;
  readonly status: CoverageStatus;
  /** Why a pending or held day is not final; null for the others. */
  readonly reason: PendingDay['reason'] | null;
}

/** What was loaded for a day: its rows, and when they were last written. */
export interface DayLoad {
  readonly rows: number;
  readonly loadedAt: Date;
}

/** A coverage day with its load; rows and time are null when nothing tells them (a given-up day, a pruned record). */
export interface CoverageRow extends CoverageDay {
  readonly rows: number | null;
  readonly loadedAt: Date | null;
}

/** The stores of a state key (`traffic[store=A,B]` -> `A,B`), null for a whole metric's key. */
export function storesOfKey(key: string): string | null {
  const metric = metricOfKey(key);
  return key === metric ? null : key.slice(metric.length + '[store='.length, -1);
}

/** Each day of one key's coverage with its status, by day. */
export function coverageDays(key: string, coverage: KeyCoverage): CoverageDay[] {
  const place = { metric: metricOfKey(key), stores: storesOfKey(key) };
  const days: CoverageDay[] = RANGE_STATUSES.flatMap(({ list, status }) =>
    coverage[list].flatMap(([first, last]) => daysBetween(first, last).map((day) => ({ ...place, day, status, reason: null }))),
  );
  for (const { day, status } of coverage.pending) {
    days.push({ ...place, day, status: status.reason === HELD_REASON ? 'held' : 'pending', reason: status.reason });
  }
  return days.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/** Every key's days, by metric, stores and day. */
export function stateCoverageDays(state: ImportState): CoverageDay[] {
  return state.keys().flatMap((key) => coverageDays(key, state.coverage(key)));
}

/** The days with what was loaded for each, as `loadOf` tells it. */
export function withLoads(days: readonly CoverageDay[], loadOf: (day: CoverageDay) => DayLoad | undefined): CoverageRow[] {
  return days.map((day) => {
    const load = loadOf(day);
    return { ...day, rows: load?.rows ?? null, loadedAt: load?.loadedAt ?? null };
  });
}

/**
 * Only the day lists of a state this release wrote (the rest of each entry, the store figures above all, is not
 * read): what a coverage table rewritten after each state write needs, without decoding the whole state again.
 */
const daysOnlySchema = z.object({
  metrics: z.record(
    z.string(),
    z.object({
      complete: z.array(rangeSchema).optional(),
      accepted: z.array(rangeSchema).optional(),
      givenUp: z.array(rangeSchema).optional(),
      pending: z.record(z.string(), z.object({ reason: z.enum(PENDING_REASONS) })).optional(),
    }),
  ),
});

/** Every key's days from a state's text as this release writes it, like `stateCoverageDays` of the loaded state. */
export function coverageDaysOfText(text: string): CoverageDay[] {
  const { metrics } = daysOnlySchema.parse(JSON.parse(text));
  return Object.keys(metrics)
    .sort()
    .flatMap((key) => coverageDays(key, keyCoverageOf(metrics[key]!)));
}
