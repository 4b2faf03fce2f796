import { hashInts } from './hash.js';

/**
 * A week as malls have it, Sunday first (day 0 of the epoch was a Thursday): a Saturday is twice a Tuesday, Friday and
 * Sunday are busy, the first half of the week quiet. The mean is 1, so a store's size stays its usual day.
 */
export const WEEKDAY_WEIGHTS: readonly number[] = [1.0, 0.85, 0.72, 0.8, 0.92, 1.27, 1.44];

/** A day's own luck: up to 12% either way, so consecutive days differ by 10-15% as real ones do. */
export const DAY_NOISE = 0.12;

/** The weekday of a local day (days since 1970-01-01), Sunday 0. */
export function weekdayOf(localDay: number): number {
  return (((localDay + 4) % 7) + 7) % 7;
}

/**
 * How busy a store's local day is next to its usual day: the weekday's weight times the day's noise, a pure function
 * of (seed, store, day) so that the sandbox stays deterministic.
 */
export function dayFactor(seed: number, storeIndex: number, localDay: number): number {
  const noise = ((hashInts(seed, 41, storeIndex, localDay) % 10_001) / 10_000) * 2 - 1;
  return WEEKDAY_WEIGHTS[weekdayOf(localDay)]! * (1 + DAY_NOISE * noise);
}
