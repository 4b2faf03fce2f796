import { stringify } from 'csv-stringify/sync';
import { DateTime } from 'luxon';
import type { MetricName, MetricResult } from '../../src/metrics/descriptors.js';

/**
 * The output rows as the README defines them (columns, order, CSV quoting), written the plain way: one object per zone, a full sort, csv-stringify
 * and JSON.stringify. The importer builds the same bytes a faster way; the tests hold it to these.
 */
export interface ReferenceRow {
  readonly sortKey: readonly [string, string, string];
  readonly csvFields: readonly string[];
  /** The NDJSON object, `metric` first. */
  readonly json: Readonly<Record<string, unknown>>;
}

export interface ReferenceResult {
  readonly store_code: string;
  readonly date: string;
  readonly granularity: string;
  readonly values: readonly Record<string, unknown>[];
}

/** The metric's own columns: name, CSV text, NDJSON value. */
const OWN_COLUMNS: Record<MetricName, (raw: unknown) => [string, string, unknown][]> = {
  'unique-users': (raw) => [['unique_users', String(raw), raw]],
  'avg-screen-time': (raw) => {
    const [hours, minutes, seconds] = String(raw).split(':').map(Number) as [number, number, number];
    const total = hours * 3600 + minutes * 60 + seconds;
    return [
      ['avg_screen_time', String(raw), raw],
      ['avg_screen_time_seconds', String(total), total],
    ];
  },
  traffic: (raw) => [['traffic_pct', String(raw), Number(raw)]],
};

const VALUE_KEYS: Record<MetricName, string> = {
  'unique-users': 'unique_users',
  'avg-screen-time': 'avg_screen_time',
  traffic: 'traffic_pct',
};

export function referenceRows(metric: MetricName, results: readonly ReferenceResult[]): ReferenceRow[] {
  const rows = results.flatMap((result) =>
    result.values.map((entry): ReferenceRow => {
      const zone = String(entry.zone ?? entry.zone_name);
      const day = DateTime.fromISO(result.date, { setZone: true }).toISODate() ?? 'invalid';
      const own = OWN_COLUMNS[metric](entry[VALUE_KEYS[metric]]);
      const common = { store_code: result.store_code, date: result.date, day, granularity: result.granularity, zone };
      return {
        sortKey: [result.store_code, result.date, zone],
        csvFields: [...Object.values(common), ...own.map(([, text]) => text)],
        json: { metric, ...common, ...Object.fromEntries(own.map(([name, , value]) => [name, value])) },
      };
    }),
  );
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return rows.sort(
    (a, b) => compare(a.sortKey[0], b.sortKey[0]) || compare(a.sortKey[1], b.sortKey[1]) || compare(a.sortKey[2], b.sortKey[2]),
  );
}

/** RFC 4180 with LF endings; CR is quoted too, as the importer does. No header. */
export function referenceCsv(rows: readonly ReferenceRow[]): string {
  return rows.length === 0
    ? ''
    : stringify(
        rows.map((row) => [...row.csvFields]),
        { record_delimiter: 'unix', quoted_match: /\r/ },
      );
}

export function referenceNdjson(rows: readonly ReferenceRow[]): string {
  return rows.map((row) => `${JSON.stringify(row.json)}\n`).join('');
}

/**
 * A daily result of `metric` at `store` and `date` with a value in each of `zones`: users and screen times that vary
 * with the zone's place in the list, traffic shares as `share(place)` gives them (they sum to 1 where the test wants).
 */
export function resultOfZones(
  metric: MetricName,
  store: string,
  date: string,
  zones: readonly string[],
  share: (place: number) => string,
): MetricResult {
  const value = (place: number): Record<string, unknown> => {
    if (metric === 'unique-users') return { unique_users: place * 7 };
    if (metric === 'avg-screen-time') return { avg_screen_time: `0${place % 10}:0${place % 6}:1${place % 10}` };
    return { traffic_pct: share(place) };
  };
  return { store_code: store, date, granularity: 'daily', values: zones.map((zone, place) => ({ zone, ...value(place) })) };
}
