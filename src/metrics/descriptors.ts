import type { ParquetColumnType } from '../output/parquet.js';
import type { MeasureSums, MetricTotal } from './measure.js';
import {
  avgScreenTimeValue,
  compareText,
  resultSchema,
  SCREEN_TIME,
  screenTimeSeconds,
  TRAFFIC_PCT,
  trafficPctValue,
  uniqueUsersValue,
} from './schema.js';
import type { MetricName } from './names.js';
import { SYNTHETIC_SCREEN_TIME, SYNTHETIC_TRAFFIC, SYNTHETIC_USERS, type SyntheticValues } from './synthetic.js';

export { METRIC_NAMES, type MetricName } from './names.js';

/** A valid result object, whatever the metric: entries carry `zone` or `zone_name` and the metric's raw value. */
export interface MetricResult {
  readonly store_code: string;
  readonly date: string;
  readonly granularity: 'daily';
  readonly values: readonly Readonly<Record<string, unknown>>[];
}

/**
 * One of the metric's own output columns, computed from the zone entry's valid raw value. The value schemas admit
 * only digits, `.` and `:`, so neither text ever needs CSV quoting or JSON escaping.
 */
export interface ValueColumn {
  readonly name: string;
  /** The CSV field. */
  readonly csv: (raw: unknown) => string;
  /** The NDJSON value, as JSON text. */
  readonly json: (raw: unknown) => string;
  /** The Parquet type its CSV text is written as. */
  readonly parquet: ParquetColumnType;
}

/**
 * Everything that differs between the three metrics is data in this table: the resource, the value's schema (and
 * the same rule as a plain predicate for the fast path), how a zone entry's value becomes the metric's columns, the
 * metric's own sanity warning, and how its day is totalled. One pipeline drives them.
 */
export interface MetricDescriptor {
  /** The metric's name: its command, its folder and its key in the state. */
  readonly name: string;
  readonly resource: string;
  readonly valueKey: string;
  readonly schema: ReturnType<typeof resultSchema>;
  /** Exactly the value schema's rule, without zod's cost; a test holds the two to each other. */
  readonly isValue: (raw: unknown) => boolean;
  /** The metric's own columns, after the common ones. */
  readonly columns: readonly ValueColumn[];
  /** A warning about a valid result that still looks wrong (never a failure). */
  readonly warningOf?: (result: MetricResult) => string | undefined;
  /** How a day of the metric is totalled, to judge whether its numbers look wrong: adds a valid result to the sums. */
  readonly total: MetricTotal & { readonly add: (sums: MeasureSums, result: MetricResult) => void };
  /** Its values made up, as the sandbox serves them. */
  readonly synthetic: SyntheticValues;
}

export const COMMON_COLUMNS = ['store_code', 'date', 'day', 'granularity', 'zone'] as const;

/** The common columns' Parquet types: `date` is the instant, `day` the store-local calendar date. */
export const COMMON_PARQUET_TYPES: Readonly<Record<(typeof COMMON_COLUMNS)[number], ParquetColumnType>> = {
  store_code: 'string',
  date: 'timestamp',
  day: 'date',
  granularity: 'string',
  zone: 'string',
};

const integerText = (raw: unknown): string => String(raw);

/** A total over every zone's value, as a number. */
function eachValue(valueKey: string, toNumber: (raw: unknown) => number): (sums: MeasureSums, result: MetricResult) => void {
  return (sums, result) => {
    for (const entry of result.values) {
      const value = toNumber(entry[valueKey]);
      sums.value += value;
      sums.weight += 1;
      if (value > 0) sums.nonZero += 1;
    }
  };
}
const screenSeconds = (raw: unknown): string => String(screenTimeSeconds(raw as string));

export const METRICS: Readonly<Record<MetricName, MetricDescriptor>> = {
  'unique-users': {
    name: 'unique-users',
    resource: 'unique-users',
    valueKey: 'unique_users',
    schema: resultSchema('unique_users', uniqueUsersValue),
    isValue: (raw) => Number.isSafeInteger(raw) && (raw as number) >= 0,
    columns: [{ name: 'unique_users', csv: integerText, json: integerText, parquet: 'int64' }],
    total: { measure: 'sum of unique_users', kind: 'sum', add: eachValue('unique_users', Number) },
    synthetic: SYNTHETIC_USERS,
  },
  'avg-screen-time': {
    name: 'avg-screen-time',
    resource: 'avg-screen-time',
    valueKey: 'avg_screen_time',
    schema: resultSchema('avg_screen_time', avgScreenTimeValue),
    isValue: (raw) => typeof raw === 'string' && SCREEN_TIME.test(raw),
    columns: [
      { name: 'avg_screen_time', csv: (raw) => raw as string, json: (raw) => `"${raw as string}"`, parquet: 'string' },
      { name: 'avg_screen_time_seconds', csv: screenSeconds, json: screenSeconds, parquet: 'int32' },
    ],
    total: {
      measure: 'mean avg_screen_time in seconds',
      kind: 'mean',
      add: eachValue('avg_screen_time', (raw) => screenTimeSeconds(raw as string)),
    },
    synthetic: SYNTHETIC_SCREEN_TIME,
  },
  traffic: {
    name: 'traffic',
    resource: 'traffic',
    valueKey: 'traffic_pct',
    schema: resultSchema('traffic_pct', trafficPctValue),
    isValue: (raw) => typeof raw === 'string' && TRAFFIC_PCT.test(raw),
    // CSV keeps the API's exact text (e.g. "0.10000"); NDJSON carries the number (0.1); Parquet the exact decimal.
    columns: [{ name: 'traffic_pct', csv: (raw) => raw as string, json: (raw) => String(Number(raw)), parquet: 'decimal(6,5)' }],
    warningOf: trafficSumWarning,
    total: { measure: 'share of results whose traffic_pct sum to 1', kind: 'mean', add: addTrafficShare },
    synthetic: SYNTHETIC_TRAFFIC,
  },
};

/** Every metric the tool knows, in the order commands and files list them. */
export const DESCRIPTORS: readonly MetricDescriptor[] = Object.values(METRICS);

/**
 * A traffic result's zones should sum to 1; each value is rounded to 5 decimals, so a sum off by up to 0.00001 per
 * zone is rounding, anything more is worth a warning (never a failure).
 */
export function trafficSumWarning(result: MetricResult): string | undefined {
  if (result.values.length === 0) return undefined;
  const sum = trafficSum(result);
  return sumsToOne(sum, result) ? undefined : `traffic_pct values sum to ${sum.toFixed(5)}, not 1`;
}

/** A traffic day's total is the share of its results whose zones sum to 1 (a result without zones is left out). */
function addTrafficShare(sums: MeasureSums, result: MetricResult): void {
  if (result.values.length === 0) return;
  // Each value read once (a year of 20,000 stores' CSV is 300 million values as text): its sum and whether it is above 0.
  let sum = 0;
  let nonZero = 0;
  for (const entry of result.values) {
    const value = Number(entry.traffic_pct);
    sum += value;
    if (value > 0) nonZero += 1;
  }
  sums.weight += 1;
  if (sumsToOne(sum, result)) sums.value += 1;
  sums.nonZero += nonZero;
}

function trafficSum(result: MetricResult): number {
  let sum = 0;
  for (const entry of result.values) sum += Number(entry.traffic_pct);
  return sum;
}

function sumsToOne(sum: number, result: MetricResult): boolean {
  return Math.abs(sum - 1) <= 0.00001 * result.values.length + 1e-9;
}

export function columnNames(metric: MetricDescriptor): string[] {
  return [...COMMON_COLUMNS, ...metric.columns.map((column) => column.name)];
}

/** The metric's columns (`rows` shape) with their types: a Parquet file's schema, a lineage event's. */
export function typedColumns(metric: MetricDescriptor): { name: string; type: ParquetColumnType }[] {
  return [
    ...COMMON_COLUMNS.map((name) => ({ name, type: COMMON_PARQUET_TYPES[name] })),
    ...metric.columns.map((column) => ({ name: column.name, type: column.parquet })),
  ];
}

/** Output order of a unit's results: store_code, then date as sent. */
export function compareResults(
  a: { readonly storeCode: string; readonly date: string },
  b: { readonly storeCode: string; readonly date: string },
): number {
  return compareText(a.storeCode, b.storeCode) || compareText(a.date, b.date);
}
