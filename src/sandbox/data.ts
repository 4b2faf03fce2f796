import { DateTime } from 'luxon';
import { hash5, hashInts, hashString, seededRandom } from './hash.js';
import { DESCRIPTORS, type MetricDescriptor } from '../metrics/descriptors.js';
import { pad2 } from '../metrics/synthetic.js';
import { dayFactor } from './rhythm.js';

/**
 * The sandbox's synthetic data set. Every datum is a pure function of (seed, store, local day, zone), so the
 * data does not depend on the wall clock except for which days exist (the `days` UTC days ending yesterday), and
 * a query only costs the results it returns. Which of them are served at a moment is decided in `serving.ts`.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/**
 * UTC offsets in minutes, assigned round-robin so that the first 4 stores already include +00:00, +02:00, -05:00
 * and +05:30, and 14 stores span -11:00 to +13:00 (the far ends of inhabited offsets, whose local days start and end
 * furthest from UTC's). Stores east of UTC answer the UTC window of the day before their local day (that is intended).
 * New offsets go at the end, so the stores that exist keep theirs.
 */
export const STORE_OFFSETS_MINUTES: readonly number[] = [120, 0, -300, 330, 60, -480, 540, 345, -210, 600, -180, 480, -660, 780];

/**
 * Free-text zone labels as stores name them: `[n] LABEL` forms, commas, double quotes, semicolons, non-ASCII.
 * Store S001 starts at the head of the list, so the awkward names show up even with the smallest data set.
 */
export const ZONE_LABELS: readonly string[] = [
  '[1] ENTRANCE',
  '[2] CHECKOUT, TILLS 1-6',
  '[3] Café "Central", Ground floor',
  'Electronics',
  '[5] FRESH PRODUCE',
  "Kids' corner",
  '[7] Drogerie & Parfümerie',
  'Garden centre, outdoor',
  '[9] BÄCKEREI',
  'Home; Living',
  '[11] 食品売り場',
  'Pharmacy "Plus"',
  '[13] Électroménager',
  'Fitting rooms',
  '[15] Wine, Beer & Spirits',
  'Customer service',
  '[17] Ålesund fish market',
  'Books & music',
  '[19] ZONA ÑANDÚ',
  'Toys',
  '[21] Sports/Outdoor',
  'Parking deck P2',
  '[23] Seasonal "Christmas" aisle',
  'Frozen foods',
  '[25] Kasse Süd',
  'Pet supplies',
  '[27] Лаунж',
  'Household, cleaning',
  '[29] Terrace – 1st floor',
  'Back office',
];

export interface DatasetConfig {
  readonly stores: number;
  readonly zones: number;
  readonly days: number;
  readonly seed: number;
  /** The metrics it holds, each made up from its descriptor; default: every metric the tool knows. */
  readonly metrics?: readonly MetricDescriptor[];
}

export interface StoreProfile {
  readonly index: number;
  readonly code: string;
  readonly offsetMinutes: number;
  /** `+hh:mm` / `-hh:mm`, as the vendor's `date` shape shows it (`+00:00` for UTC). */
  readonly offsetText: string;
  readonly zoneNames: readonly string[];
  /** Typical daily visitors per zone on an average day, so that stores differ in size (the rhythm in `rhythm.ts`). */
  readonly size: number;
}

/** A zone's entry of a result: its name and the metric's value under the metric's key (`unique_users`, ...). */
export interface ZoneEntry {
  readonly zone: string;
  readonly [valueKey: string]: unknown;
}

export interface MetricResult {
  store_code: string;
  date: string;
  granularity: 'daily';
  values: ZoneEntry[];
}

/** The results of one query, as (store, local day) references in their served (shuffled) order. */
export interface QueryRefs {
  /** Identifies the query (metric, clamped window, store) for caches. */
  readonly key: string;
  readonly count: number;
  readonly storeIndexes: Int32Array;
  readonly localDays: Int32Array;
  /** The latest local midnight among them (epoch ms), or -Infinity when there are none. */
  readonly latestMs: number;
}

/** Instants in epoch milliseconds, both inclusive. */
export interface InstantRange {
  readonly fromMs: number;
  readonly toMs: number;
}

const QUERY_CACHE_ENTRIES = 64;

/** Parses a `datetime_gte`/`datetime_lte` value: ISO 8601 date-time with `Z` or an explicit offset. */
export function parseInstant(text: string): number | undefined {
  // An offset is required: the vendor documents UTC date-times, and a naive time would be ambiguous.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/i.test(text)) return undefined;
  const parsed = DateTime.fromISO(text, { setZone: true });
  return parsed.isValid ? parsed.toMillis() : undefined;
}

export function formatOffset(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const absolute = Math.abs(offsetMinutes);
  return `${sign}${pad2(Math.floor(absolute / 60))}:${pad2(absolute % 60)}`;
}

export class Dataset {
  private readonly profiles: (StoreProfile | undefined)[];
  private readonly codeWidth: number;
  private readonly queryCache = new Map<string, QueryRefs>();

  private readonly metrics: ReadonlyMap<string, MetricDescriptor>;

  constructor(readonly config: DatasetConfig) {
    this.metrics = new Map((config.metrics ?? DESCRIPTORS).map((metric) => [metric.name, metric]));
    this.profiles = new Array<StoreProfile | undefined>(config.stores);
    this.codeWidth = Math.max(3, String(config.stores).length);
  }

  /** A metric it holds, by name; undefined for one it does not (a 404 at the API). */
  metric(name: string): MetricDescriptor | undefined {
    return this.metrics.get(name);
  }

  storeCode(index: number): string {
    return `S${String(index + 1).padStart(this.codeWidth, '0')}`;
  }

  storeIndexOf(code: string): number | undefined {
    const match = /^S(\d+)$/.exec(code);
    if (!match) return undefined;
    const index = Number(match[1]) - 1;
    if (index < 0 || index >= this.config.stores || this.storeCode(index) !== code) return undefined;
    return index;
  }

  store(index: number): StoreProfile {
    const cached = this.profiles[index];
    if (cached) return cached;
    const { seed, zones } = this.config;
    const offsetMinutes = STORE_OFFSETS_MINUTES[index % STORE_OFFSETS_MINUTES.length]!;
    // Zones vary per store, between half of --zones (rounded up) and --zones.
    const minimumZones = Math.ceil(zones / 2);
    const zoneCount = minimumZones + (hashInts(seed, 3, index) % (zones - minimumZones + 1));
    const firstLabel = (index * 7) % ZONE_LABELS.length;
    const zoneNames: string[] = [];
    for (let zone = 0; zone < zoneCount; zone += 1) {
      zoneNames.push(zone < ZONE_LABELS.length ? ZONE_LABELS[(firstLabel + zone) % ZONE_LABELS.length]! : `[${zone + 1}] AREA ${zone + 1}`);
    }
    const profile: StoreProfile = {
      index,
      code: this.storeCode(index),
      offsetMinutes,
      offsetText: formatOffset(offsetMinutes),
      zoneNames,
      size: 40 + (hashInts(seed, 5, index) % 1500),
    };
    this.profiles[index] = profile;
    return profile;
  }

  /** The instants covered: from the first covered UTC day's midnight through yesterday 23:59:59.999Z. */
  coverage(now: Date): InstantRange {
    const todayStart = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
    return { fromMs: todayStart - this.config.days * DAY_MS, toMs: todayStart - 1 };
  }

  /** The instant of a store's local midnight of `localDay` (days since 1970-01-01 in the store's own offset). */
  static instantOf(localDay: number, offsetMinutes: number): number {
    return localDay * DAY_MS - offsetMinutes * MINUTE_MS;
  }

  /**
   * The (store, local day) pairs whose local midnight lies in [fromMs, toMs] and inside the coverage, in a stable
   * seeded shuffle (the vendor does not sort results). Cached per query, so every page of it sees one order.
   */
  query(metric: string, window: InstantRange, storeIndex: number | undefined, now: Date): QueryRefs {
    const coverage = this.coverage(now);
    const fromMs = Math.max(window.fromMs, coverage.fromMs);
    const toMs = Math.min(window.toMs, coverage.toMs);
    const key = `${metric}|${fromMs}|${toMs}|${storeIndex ?? '*'}`;
    const cached = this.cached(key);
    if (cached) return cached;
    const storeIndexes: number[] = [];
    const localDays: number[] = [];
    let latestMs = Number.NEGATIVE_INFINITY;
    if (fromMs <= toMs) {
      const first = storeIndex ?? 0;
      const last = storeIndex ?? this.config.stores - 1;
      for (let index = first; index <= last; index += 1) {
        const offsetMs = STORE_OFFSETS_MINUTES[index % STORE_OFFSETS_MINUTES.length]! * MINUTE_MS;
        const firstDay = Math.ceil((fromMs + offsetMs) / DAY_MS);
        const lastDay = Math.floor((toMs + offsetMs) / DAY_MS);
        for (let day = firstDay; day <= lastDay; day += 1) {
          storeIndexes.push(index);
          localDays.push(day);
        }
        if (firstDay <= lastDay) latestMs = Math.max(latestMs, lastDay * DAY_MS - offsetMs);
      }
    }
    const refs: QueryRefs = {
      key,
      count: storeIndexes.length,
      storeIndexes: Int32Array.from(storeIndexes),
      localDays: Int32Array.from(localDays),
      latestMs,
    };
    // Fisher-Yates with a PRNG seeded by the query, so the order is stable for the query but not sorted.
    const random = seededRandom(hashInts(this.config.seed, hashString(key)));
    for (let position = refs.count - 1; position > 0; position -= 1) {
      const other = Math.floor(random() * (position + 1));
      swap(refs.storeIndexes, position, other);
      swap(refs.localDays, position, other);
    }
    this.remember(refs);
    return refs;
  }

  private cached(key: string): QueryRefs | undefined {
    const cached = this.queryCache.get(key);
    if (cached) {
      // Refresh its place in the LRU order.
      this.queryCache.delete(key);
      this.queryCache.set(key, cached);
    }
    return cached;
  }

  private remember(refs: QueryRefs): void {
    this.queryCache.set(refs.key, refs);
    if (this.queryCache.size > QUERY_CACHE_ENTRIES) {
      const oldest = this.queryCache.keys().next().value;
      if (oldest !== undefined) this.queryCache.delete(oldest);
    }
  }

  /**
   * The refs that `keep` accepts, in the same order, as a query of their own named `key` (cached under it, so `key`
   * must name everything `keep` depends on): results the vendor does not serve are left out this way.
   */
  filter(refs: QueryRefs, keep: (storeIndex: number, localDay: number) => boolean, key: string): QueryRefs {
    const cached = this.cached(key);
    if (cached) return cached;
    const storeIndexes: number[] = [];
    const localDays: number[] = [];
    let latestMs = Number.NEGATIVE_INFINITY;
    for (let position = 0; position < refs.count; position += 1) {
      const storeIndex = refs.storeIndexes[position]!;
      const localDay = refs.localDays[position]!;
      if (!keep(storeIndex, localDay)) continue;
      storeIndexes.push(storeIndex);
      localDays.push(localDay);
      latestMs = Math.max(latestMs, Dataset.instantOf(localDay, this.store(storeIndex).offsetMinutes));
    }
    const kept = {
      key,
      count: storeIndexes.length,
      storeIndexes: Int32Array.from(storeIndexes),
      localDays: Int32Array.from(localDays),
      latestMs,
    };
    this.remember(kept);
    return kept;
  }

  /** The seed of a result's values as first published (revision 0) or as a later correction revised them. */
  revisionSeed(revision: number): number {
    return revision === 0 ? this.config.seed : hashInts(this.config.seed, 31, revision);
  }

  /** The seed of the values of a local day still running, as they stood in a given hour (hours since the epoch). */
  provisionalSeed(hour: number): number {
    return hashInts(this.config.seed, 37, hour);
  }

  /**
   * One result object: a store on its local day, with one entry per zone. Another `seed` than the data set's
   * (`revisionSeed`, `provisionalSeed`) gives other, equally valid values: the stores and zones stay.
   */
  result(metric: string, storeIndex: number, localDay: number, seed = this.config.seed): MetricResult {
    const store = this.store(storeIndex);
    const descriptor = this.metrics.get(metric);
    if (descriptor === undefined) throw new Error(`the data set holds no metric ${metric}`);
    const { synthetic, valueKey } = descriptor;
    const date = `${new Date(localDay * DAY_MS).toISOString().slice(0, 10)}T00:00:00${store.offsetText}`;
    const zoneNames = store.zoneNames;
    // The zones' shapes come from the data set's seed, not the revision's: a correction is the same store's day.
    const raw = synthetic.values(
      zoneNames.map((_zone, zoneIndex) => hash5(seed, synthetic.salt, storeIndex, localDay, zoneIndex)),
      // Whole visitors: a metric may count with it.
      Math.max(1, Math.round(store.size * dayFactor(seed, storeIndex, localDay))),
      zoneNames.map((_zone, zoneIndex) => hashInts(this.config.seed, synthetic.salt, storeIndex, zoneIndex)),
    );
    const values = zoneNames.map((zone, zoneIndex) => ({ zone, [valueKey]: raw[zoneIndex] }));
    return { store_code: store.code, date, granularity: 'daily', values };
  }

  /** The results of refs[start, end) in served order, each with the values of the seed `seedOf` gives (default: as first published). */
  slice(
    metric: string,
    refs: QueryRefs,
    start: number,
    end: number,
    seedOf?: (storeIndex: number, localDay: number) => number,
  ): MetricResult[] {
    const results: MetricResult[] = [];
    const stop = Math.min(end, refs.count);
    for (let position = start; position < stop; position += 1) {
      const storeIndex = refs.storeIndexes[position]!;
      const localDay = refs.localDays[position]!;
      results.push(this.result(metric, storeIndex, localDay, seedOf?.(storeIndex, localDay) ?? this.config.seed));
    }
    return results;
  }
}

function swap(array: Int32Array, a: number, b: number): void {
  const kept = array[a]!;
  array[a] = array[b]!;
  array[b] = kept;
}
