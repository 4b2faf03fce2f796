import { addDays, type CalendarDay } from '../../window/days.js';
import type { DayProfile } from './day-profile.js';
import type { BatchFinding, StoreFinding } from './store-rule.js';

/** What a day whose numbers look wrong does: stays pending, is recorded complete with a warning, or is not judged. */
export const SUSPECT_MODES = ['hold', 'warn', 'off'] as const;
export type SuspectMode = (typeof SUSPECT_MODES)[number];

/**
 * The rule's numbers. A third and three times: a real day (a holiday, a storm, a sale) moves a mall's traffic by tens
 * of percent, a broken batch by a factor (a tenth of the users, everything zero). The median of the four weeks before,
 * so that one odd day among them moves it little and the weekly rhythm is in it; at least 7 of those days complete, so
 * a new metric or a long gap is not judged from a handful of days.
 */
export const SUSPECT_RULE = { factor: 3, days: 28, minimumDays: 7 } as const;

/** Why a day's numbers look wrong. */
export interface Suspicion {
  readonly measure: string;
  readonly value: number;
  /** The median of the complete days before it, when there were enough to judge by. */
  readonly median?: number;
  /** Every value of the day is zero. */
  readonly allZero?: true;
  /** Stores outside their usual range (the per-store rule): how many, and the first few with their ranges. */
  readonly stores?: { readonly count: number; readonly first: readonly StoreFinding[]; readonly all: readonly string[] };
  /** Most stores moved together by one factor: one suspicion of the whole day, the vendor's batch. */
  readonly batch?: BatchFinding;
}

/** How many stores a suspicion names by name; the rest are counted. */
export const NAMED_STORES = 3;

/**
 * Judges a day's total against the profiles of the metric's complete days: suspect when every value is zero (which
 * needs no history), or when the total is below a third or above three times the median of the complete days among
 * the 28 before it, once at least 7 of them are complete.
 */
export function suspicionOf(
  day: CalendarDay,
  figures: { readonly measure: string; readonly total: number; readonly allZero: boolean },
  completeProfiles: ReadonlyMap<CalendarDay, DayProfile>,
): Suspicion | undefined {
  const totals: number[] = [];
  for (let back = 1; back <= SUSPECT_RULE.days; back++) {
    const profile = completeProfiles.get(addDays(day, -back));
    if (profile !== undefined) totals.push(profile[3]);
  }
  const median = totals.length >= SUSPECT_RULE.minimumDays ? medianOf(totals) : undefined;
  const base = { measure: figures.measure, value: figures.total, ...(median === undefined ? {} : { median }) };
  if (figures.allZero) return { ...base, allZero: true };
  if (median === undefined || median <= 0) return undefined;
  const outside = figures.total < median / SUSPECT_RULE.factor || figures.total > median * SUSPECT_RULE.factor;
  return outside ? base : undefined;
}

/** The words of a suspicion, for a warning: `the sum of unique_users is 120, below a third of 1432, the median of ...`. */
export function describeSuspicion(suspicion: Suspicion): string {
  const parts: string[] = [];
  if (suspicion.allZero) parts.push(`every value is zero (the ${suspicion.measure} is 0)`);
  else if (suspicion.median !== undefined) {
    const side = suspicion.value < suspicion.median ? 'below a third of' : 'above three times';
    parts.push(
      `the ${suspicion.measure} is ${suspicion.value}, ${side} ${suspicion.median}, the median of the complete days of the ${SUSPECT_RULE.days} before it`,
    );
  }
  const { batch, stores } = suspicion;
  if (batch !== undefined) {
    parts.push(
      `${batch.stores} of ${batch.judged} stores moved together to x${batch.factor} of their usual ${suspicion.measure} (the vendor's batch?)`,
    );
  }
  if (stores !== undefined) {
    const named = stores.first.map(
      (store) =>
        `${store.store} ${store.value} (expected ${store.low} to ${store.high}, ${store.basis === 'weekday' ? 'its same weekday' : 'its recent days'})`,
    );
    const more = stores.count > stores.first.length ? `, and ${stores.count - stores.first.length} more` : '';
    parts.push(
      `${stores.count} ${stores.count === 1 ? 'store' : 'stores'} outside their usual ${suspicion.measure}: ${named.join(', ')}${more}`,
    );
  }
  return parts.join('; ');
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : Number(((sorted[middle - 1]! + sorted[middle]!) / 2).toPrecision(6));
}
