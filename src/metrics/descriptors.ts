import { avgScreenTimeValue, resultSchema, screenTimeSeconds, trafficPctValue, uniqueUsersValue } from './schema.js';
import { trafficSumWarning } from './validate.js';

export const METRIC_NAMES = ['unique-users', 'avg-screen-time', 'traffic'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** A validated result object, whatever the metric: entries carry `zone` or `zone_name` and the metric's raw value. */
export interface MetricResult {
  readonly store_code: string;
  readonly date: string;
  readonly granularity: 'daily';
  readonly values: readonly Record<string, unknown>[];
}

/**
 * One of the metric's own output columns, computed from the zone entry's validated raw value. The value schemas
 * admit only digits, `.` and `:`, so neither text ever needs CSV quoting or JSON escaping.
 */
export interface ValueColumn {
  readonly name: string;
  /** The CSV field. */
  readonly csv: (raw: unknown) => string;
  /** The NDJSON value, as JSON text. */
  readonly json: (raw: unknown) => string;
}

/**
 * Everything that differs between the three metrics is data in this table: the resource, the value's schema, how
 * a zone entry's value becomes the metric's columns, and the metric's own sanity warning. One pipeline drives them.
 */
export interface MetricDescriptor {
  readonly name: MetricName;
  readonly resource: string;
  readonly valueKey: string;
  readonly schema: ReturnType<typeof resultSchema>;
  /** The metric's own columns, after the common ones. */
  readonly columns: readonly ValueColumn[];
  /** A warning about a valid result that still looks wrong (never a failure: SPEC 2.5). */
  readonly warningOf?: (result: MetricResult) => string | undefined;
}

export const COMMON_COLUMNS = ['store_code', 'date', 'day', 'granularity', 'zone'] as const;

const integerText = (raw: unknown): string => String(raw as number);
const screenSeconds = (raw: unknown): string => String(screenTimeSeconds(raw as string));

export const METRICS: Readonly<Record<MetricName, MetricDescriptor>> = {
  'unique-users': {
    name: 'unique-users',
    resource: 'unique-users',
    valueKey: 'unique_users',
    schema: resultSchema('unique_users', uniqueUsersValue),
    columns: [{ name: 'unique_users', csv: integerText, json: integerText }],
  },
  'avg-screen-time': {
    name: 'avg-screen-time',
    resource: 'avg-screen-time',
    valueKey: 'avg_screen_time',
    schema: resultSchema('avg_screen_time', avgScreenTimeValue),
    columns: [
      { name: 'avg_screen_time', csv: (raw) => raw as string, json: (raw) => `"${raw as string}"` },
      { name: 'avg_screen_time_seconds', csv: screenSeconds, json: screenSeconds },
    ],
  },
  traffic: {
    name: 'traffic',
    resource: 'traffic',
    valueKey: 'traffic_pct',
    schema: resultSchema('traffic_pct', trafficPctValue),
    // CSV keeps the API's exact text (e.g. "0.10000"); NDJSON carries the number (0.1).
    columns: [{ name: 'traffic_pct', csv: (raw) => raw as string, json: (raw) => String(Number(raw)) }],
    warningOf: trafficSumWarning,
  },
};

export function columnNames(metric: MetricDescriptor): string[] {
  return [...COMMON_COLUMNS, ...metric.columns.map((column) => column.name)];
}

/** The zone name of an entry: `zone` (what the payloads carry) or `zone_name` (what the document names). */
export function zoneOf(entry: Readonly<Record<string, unknown>>): string {
  return String(entry.zone ?? entry.zone_name);
}

/** Code-unit order (not locale order), so files are identical on every machine. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareResults(a: Pick<MetricResult, 'store_code' | 'date'>, b: Pick<MetricResult, 'store_code' | 'date'>): number {
  return compareText(a.store_code, b.store_code) || compareText(a.date, b.date);
}
