import {
  avgScreenTimeValue,
  localDay,
  resultSchema,
  screenTimeSeconds,
  trafficPctValue,
  uniqueUsersValue,
} from './schema.js';

export const METRIC_NAMES = ['unique-users', 'avg-screen-time', 'traffic'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** A validated result object, whatever the metric: entries are normalised to `zone` + the metric's raw value. */
export interface MetricResult {
  readonly store_code: string;
  readonly date: string;
  readonly granularity: 'daily';
  readonly values: readonly Record<string, unknown>[];
}

/** One output row: the common columns, then the metric's own. Values are already in their NDJSON types. */
export type MetricRow = Record<string, string | number>;

export interface ColumnSpec {
  readonly name: string;
  /** CSV text of the row's value; defaults to String(value). */
  readonly csv?: (row: MetricRow) => string;
}

/**
 * Everything that differs between the three metrics is data in this table: the resource, the value's schema, and how
 * one zone entry becomes the metric's columns. One pipeline drives them all.
 */
export interface MetricDescriptor {
  readonly name: MetricName;
  readonly resource: string;
  readonly valueKey: string;
  readonly schema: ReturnType<typeof resultSchema>;
  /** The metric's own columns, after the common ones. */
  readonly columns: readonly ColumnSpec[];
  readonly valueColumns: (raw: unknown) => MetricRow;
}

export const COMMON_COLUMNS = ['store_code', 'date', 'day', 'granularity', 'zone'] as const;

export const METRICS: Readonly<Record<MetricName, MetricDescriptor>> = {
  'unique-users': {
    name: 'unique-users',
    resource: 'unique-users',
    valueKey: 'unique_users',
    schema: resultSchema('unique_users', uniqueUsersValue),
    columns: [{ name: 'unique_users' }],
    valueColumns: (raw) => ({ unique_users: raw as number }),
  },
  'avg-screen-time': {
    name: 'avg-screen-time',
    resource: 'avg-screen-time',
    valueKey: 'avg_screen_time',
    schema: resultSchema('avg_screen_time', avgScreenTimeValue),
    columns: [{ name: 'avg_screen_time' }, { name: 'avg_screen_time_seconds' }],
    valueColumns: (raw) => ({ avg_screen_time: raw as string, avg_screen_time_seconds: screenTimeSeconds(raw as string) }),
  },
  traffic: {
    name: 'traffic',
    resource: 'traffic',
    valueKey: 'traffic_pct',
    schema: resultSchema('traffic_pct', trafficPctValue),
    // NDJSON carries a number; CSV keeps the API's exact text (e.g. "0.10000"), kept alongside in `traffic_pct_text`.
    columns: [{ name: 'traffic_pct', csv: (row) => String(row.traffic_pct_text) }],
    valueColumns: (raw) => ({ traffic_pct: Number(raw), traffic_pct_text: raw as string }),
  },
};

export function columnNames(metric: MetricDescriptor): string[] {
  return [...COMMON_COLUMNS, ...metric.columns.map((column) => column.name)];
}

/** One row per zone entry of a validated result. */
export function rowsOf(metric: MetricDescriptor, result: MetricResult): MetricRow[] {
  const day = localDay(result.date);
  return result.values.map((entry) => ({
    store_code: result.store_code,
    date: result.date,
    day,
    granularity: result.granularity,
    zone: String(entry.zone ?? entry.zone_name),
    ...metric.valueColumns(entry[metric.valueKey]),
  }));
}

/** Code-point order (not locale order), so files are identical on every machine. */
function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareRows(a: MetricRow, b: MetricRow): number {
  return (
    compareCodePoints(String(a.store_code), String(b.store_code)) ||
    compareCodePoints(String(a.date), String(b.date)) ||
    compareCodePoints(String(a.zone), String(b.zone))
  );
}

export function compareResults(a: Pick<MetricResult, 'store_code' | 'date'>, b: Pick<MetricResult, 'store_code' | 'date'>): number {
  return compareCodePoints(a.store_code, b.store_code) || compareCodePoints(a.date, b.date);
}
