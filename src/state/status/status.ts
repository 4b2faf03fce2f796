import { rangesOfDays, type DayRange } from '../../window/day-ranges.js';
import { addDays, daysFrom, type CalendarDay } from '../../window/days.js';
import { defaultDay } from '../../window/day-mode.js';
import { firstKnownDay, gapDays, latestFinal } from '../coverage.js';
import type { ImportState } from '../import-state.js';
import { metricOfKey } from '../keys.js';
import type { PendingDay } from '../storage/versions/current.js';

/** One state key as `status` reports it. */
export interface KeyStatus {
  readonly key: string;
  readonly metric: string;
  /** The earliest day the state knows of (complete, accepted, given up or pending). */
  readonly firstDay: CalendarDay | null;
  readonly lastCompleteDay: CalendarDay | null;
  /**
   * Days between the latest final day and yesterday (UTC; in local mode the latest local day over everywhere). Before
   * the first final day, from the day before coverage starts: a key first asked for yesterday is 1 day behind, not
   * "never complete". Null only for a key that holds no day at all.
   */
  readonly daysBehind: number | null;
  readonly stores: number | null;
  /** Days between the first and the latest final day that are neither complete nor accepted, as ranges. */
  readonly gaps: readonly DayRange[];
  readonly gapDays: number;
  /** Each pending day, why, and what settles it: the next `--catch-up` asks again, or `accept` records it final. */
  readonly pending: readonly ({
    readonly day: CalendarDay;
    readonly settledBy: readonly Settler[];
    /** Held as suspect, a correction of a day that was final. */
    readonly correction?: true;
  } & PendingDay)[];
  readonly givenUp: readonly DayRange[];
  readonly accepted: readonly DayRange[];
  /** Pending days whose complete data looks wrong (they are gaps too). */
  readonly suspect: readonly DayRange[];
  /** More than `--max-behind` days behind, or a gap. */
  readonly behind: boolean;
}

/** What can settle a pending day: the next `--catch-up` (it asks again), or `accept` (a person records it final). */
export type Settler = 'catch-up' | 'accept';

/**
 * Data a vendor may never fix (held as suspect, stores missing, nothing published) may need a person's `accept`;
 * the other reasons settle by themselves with the next `--catch-up`. `accept` settles a metric's days, not those of
 * a store selection (`traffic[store=S1]`).
 */
function settlersOf(reason: PendingDay['reason'], wholeMetric: boolean): Settler[] {
  const vendors = reason === 'suspect' || reason === 'partly-published' || reason === 'not-published';
  return vendors && wholeMetric ? ['catch-up', 'accept'] : ['catch-up'];
}

/** What `status` knows, from the state alone. */
export function statusOf(state: ImportState, now: Date, maxBehind: number | undefined): KeyStatus[] {
  // Behind what could be complete: yesterday (UTC), or in local mode the latest local day over everywhere.
  const last = defaultDay(state.dayMode, now);
  return state.keys().map((key) => {
    const coverage = state.coverage(key);
    const final = latestFinal(coverage);
    const gaps = gapDays(coverage);
    const first = firstKnownDay(coverage);
    // Before the first final day, coverage starts where the key was first asked for: no day before it is missing.
    const reference = final ?? (first === undefined ? undefined : addDays(first, -1));
    const daysBehind = reference === undefined ? null : Math.max(0, daysFrom(reference, last));
    return {
      key,
      metric: metricOfKey(key),
      firstDay: first ?? null,
      lastCompleteDay: state.lastCompleteDay(key) ?? null,
      daysBehind,
      stores: state.storeCount(key) ?? null,
      gaps: rangesOfDays(gaps),
      gapDays: gaps.length,
      pending: coverage.pending.map(({ day, status }) => ({
        day,
        ...status,
        // A held correction keeps the profile the day was final with.
        ...(status.reason === 'suspect' && state.profileOf(key, day) !== undefined ? { correction: true as const } : {}),
        settledBy: settlersOf(status.reason, key === metricOfKey(key)),
      })),
      givenUp: coverage.givenUp,
      accepted: coverage.accepted,
      suspect: rangesOfDays(coverage.pending.filter(({ status }) => status.reason === 'suspect').map(({ day }) => day)),
      behind: maxBehind !== undefined && (daysBehind === null || daysBehind > maxBehind || gaps.length > 0),
    };
  });
}
