import { METRICS, type MetricName } from '../../src/metrics/descriptors.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import type { TestPostgres } from './postgres.js';
import { referenceRows, type ReferenceResult } from './reference-rows.js';

/** A metric's table name: its name with `_` for `-`. */
export const tableOf = (metric: string): string => metric.replaceAll('-', '_');

/** A UTC day's bounds as SQL compares an instant to them. */
const dayWhere = (day: string): string => ` WHERE date >= '${day}T00:00:00Z' AND date <= '${day}T23:59:59Z'`;

/**
 * A table's rows (of one UTC day, or all) as comparable text, sorted: the instant in milliseconds, every other value as
 * SQL prints it.
 */
export async function tableRows(
  server: TestPostgres,
  at: { database: string; schema: string },
  metric: MetricName,
  day?: string,
): Promise<string[]> {
  const own = METRICS[metric].columns.map((column) => `${column.name}::text`).join(', ');
  const rows = await server.query(
    `SELECT store_code, (extract(epoch FROM date) * 1000)::bigint::text AS ms, day::text, granularity, zone, ${own} ` +
      `FROM "${at.schema}".${tableOf(metric)}${day === undefined ? '' : dayWhere(day)}`,
    [],
    at.database,
  );
  return rows.map((row) => JSON.stringify(Object.values(row))).sort();
}

/** Each row's version (`xmin`) of a UTC day's rows, sorted: a unit left untouched keeps them all. */
export async function rowVersions(
  server: TestPostgres,
  at: { database: string; schema: string },
  metric: MetricName,
  day: string,
): Promise<string[]> {
  const rows = await server.query<{ v: string }>(
    `SELECT xmin::text AS v FROM "${at.schema}".${tableOf(metric)}${dayWhere(day)}`,
    [],
    at.database,
  );
  return rows.map((row) => row.v).sort();
}

/** What the sandbox holds for the UTC days, in `tableRows`' text: the rows built the plain way, typed as SQL prints them. */
export function sandboxRows(sandbox: Sandbox, metric: MetricName, days: readonly string[]): string[] {
  return days
    .flatMap((day) =>
      referenceRows(metric, sandbox.results(metric, { gte: `${day}T00:00:00Z`, lte: `${day}T23:59:59Z` }) as ReferenceResult[]),
    )
    .map((row) => {
      const [store, date, localDay, granularity, zone, ...values] = row.csvFields;
      // numeric(6,5) prints its five decimals.
      const typed = metric === 'traffic' ? values.map((value) => Number(value).toFixed(5)) : values;
      return JSON.stringify([store, String(Date.parse(date!)), localDay, granularity, zone, ...typed]);
    })
    .sort();
}

/** The UTC days from `from` to `to`, both included. */
export function daysFrom(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10)) days.push(day);
  return days;
}
