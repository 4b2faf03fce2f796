import { screenTimeSeconds } from './schema.js';

/**
 * A metric's values as the vendor publishes them, made up: what the sandbox serves. Each descriptor has one, so a
 * metric is one row for the emulator too.
 */
export interface SyntheticValues {
  /** Mixed into the data set's seed, so that each metric's values differ. */
  readonly salt: number;
  /**
   * One day's raw values for a store's zones: from a hash per zone and day, the store's visitors that day (its size
   * times the day's rhythm), and a hash per zone that stays from day to day (the zone's own size and character).
   */
  readonly values: (zoneHashes: readonly number[], storeSize: number, zoneShapes: readonly number[]) => unknown[];
  /** A raw value as a broken batch publishes it: scaled by `factor` (0: zero), still valid for the data contract. */
  readonly scaled: (raw: unknown, factor: number) => unknown;
}

const TRAFFIC_UNITS = 100_000; // 5 decimals
/** The longest screen time the data contract admits (four-digit hours). */
const MAX_SCREEN_SECONDS = 9999 * 3600 + 59 * 60 + 59;

/** Two digits, for times and offsets. */
export function pad2(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

export function formatDuration(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  return `${pad2(hours)}:${pad2(minutes)}:${pad2(totalSeconds % 60)}`;
}

/** Splits 100000 units (1.00000) over the weights with the largest-remainder method, so the sum is exact. */
export function distributeTraffic(weights: readonly number[]): string[] {
  const zoneCount = weights.length;
  let total = 0;
  for (const weight of weights) total += weight;
  const units = new Array<number>(zoneCount);
  // Remainders are integers (weight * UNITS mod total), so comparisons are exact.
  const remainders = new Array<number>(zoneCount);
  let assigned = 0;
  for (let index = 0; index < zoneCount; index += 1) {
    const scaled = total === 0 ? 0 : weights[index]! * TRAFFIC_UNITS;
    const share = total === 0 ? 0 : Math.floor(scaled / total);
    units[index] = share;
    remainders[index] = total === 0 ? 0 : scaled - share * total;
    assigned += share;
  }
  if (total === 0) {
    units[0] = TRAFFIC_UNITS;
    assigned = TRAFFIC_UNITS;
  }
  // Fewer leftover units than zones: hand one each to the largest remainders (ties: first zone).
  for (let leftover = TRAFFIC_UNITS - assigned; leftover > 0; leftover -= 1) {
    let best = 0;
    for (let index = 1; index < zoneCount; index += 1) if (remainders[index]! > remainders[best]!) best = index;
    units[best] = units[best]! + 1;
    remainders[best] = -1;
  }
  const shares = new Array<string>(zoneCount);
  for (let index = 0; index < zoneCount; index += 1) {
    const unit = units[index]!;
    shares[index] = unit === TRAFFIC_UNITS ? '1.00000' : `0.${String(unit).padStart(5, '0')}`;
  }
  return shares;
}

/**
 * Unique users: each zone its own share of the store's visitors that day (20-150%, kept from day to day) and 5% of
 * luck of its own; about one zone in 97 is closed and has nobody, day after day (a zone that empties on one day only
 * would be a store's bad day for a store of two zones).
 */
export const SYNTHETIC_USERS: SyntheticValues = {
  salt: 11,
  values: (hashes, size, shapes) =>
    hashes.map((hash, zone) => {
      const shape = shapes[zone] ?? hash;
      if (shape % 97 === 0) return 0;
      return Math.floor((size * (20 + ((shape >>> 8) % 130)) * (95 + (hash % 11))) / 10_000);
    }),
  scaled: (raw, factor) => Math.round((raw as number) * factor),
};

/**
 * Average screen time: each zone its own, up to three hours (people linger in a café, not at the tills), 10% either
 * way from day to day and no weekly rhythm; about one zone in 89 has none, day after day.
 */
export const SYNTHETIC_SCREEN_TIME: SyntheticValues = {
  salt: 13,
  values: (hashes, _size, shapes) =>
    hashes.map((hash, zone) => {
      const shape = shapes[zone] ?? hash;
      if (shape % 89 === 0) return formatDuration(0);
      return formatDuration(Math.min(10_799, Math.floor((((shape >>> 7) % 10_800) * (90 + (hash % 21))) / 100)));
    }),
  scaled: (raw, factor) => formatDuration(Math.min(MAX_SCREEN_SECONDS, Math.round(screenTimeSeconds(raw as string) * factor))),
};

/** Traffic: the store's visits shared over its zones, summing to exactly 1; about one zone in 53 had none. */
export const SYNTHETIC_TRAFFIC: SyntheticValues = {
  salt: 17,
  values: (hashes) => distributeTraffic(hashes.map((hash) => (hash % 53 === 0 ? 0 : 1 + ((hash >>> 6) % 1000)))),
  scaled: (raw, factor) => Math.min(1, Number(raw) * factor).toFixed(5),
};
