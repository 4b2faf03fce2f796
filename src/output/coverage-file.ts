import { epochDayOf } from '../window/days.js';
import type { RunManifest } from './run-manifest.js';

/** Where a folder or bucket keeps its coverage table, beside the state; the leading `_` makes lake readers skip it. */
export const COVERAGE_FOLDER = '_coverage';
export const COVERAGE_FILE = 'coverage.parquet';

/** One row of the coverage table: a day of a metric (or of a `--store` selection), its status and its load. */
export interface CoverageFileRow {
  readonly metric: string;
  readonly stores: string | null;
  readonly day: string;
  readonly status: string;
  readonly reason: string | null;
  readonly rows: number | null;
  readonly loadedAt: Date | null;
}

/** What the manifests say was last loaded for a (metric, store, day) unit. */
export interface UnitLoad {
  readonly rows: number;
  readonly loadedAt: Date;
}

/** A unit's place as the loads are keyed: `store` is '' for a unit of every store. */
export const unitLoadKey = (metric: string, day: string, store: string): string => JSON.stringify([metric, day, store]);

/**
 * Each unit's last load from the run manifests (whatever their names): the latest run that wrote new bytes for it (its rows, and the run's
 * end as the time), else the newest that wrote it at all. Settlements (`accept`, `reopen`) count no rows and load
 * nothing, so they are passed over, as are units without results.
 */
export function manifestLoads(manifests: readonly RunManifest[]): Map<string, UnitLoad> {
  const newest = new Map<string, UnitLoad & { readonly changed: boolean }>();
  // In the order the runs ended (then started): of two overlapping runs, the one that ended last wrote last.
  const byEnd = [...manifests].sort((a, b) => Date.parse(a.end) - Date.parse(b.end) || (a.runId < b.runId ? -1 : 1));
  for (const manifest of byEnd) {
    const loadedAt = new Date(manifest.end);
    for (const unit of manifest.units) {
      // A unit without results wrote nothing (a database keeps no unit for it either): the last load stands.
      if (unit.rows === null || unit.rows === 0 || unit.status === 'failed') continue;
      const key = unitLoadKey(unit.metric, unit.day, unit.store ?? '');
      const known = newest.get(key);
      // Bytes left as they were keep the time they were written, as a database's unit keeps its load time.
      if (known !== undefined && known.changed && !unit.changed) continue;
      newest.set(key, {
        rows: unit.rows,
        loadedAt: known !== undefined && !unit.changed ? known.loadedAt : loadedAt,
        changed: unit.changed,
      });
    }
  }
  return new Map([...newest].map(([key, { rows, loadedAt }]) => [key, { rows, loadedAt }]));
}

const text = (name: string, required: boolean) =>
  ({
    name,
    type: 'BYTE_ARRAY',
    converted_type: 'UTF8',
    logical_type: { type: 'STRING' },
    repetition_type: required ? 'REQUIRED' : 'OPTIONAL',
  }) as const;

/** The table's schema: typed as the data files are (a DATE day, an instant adjusted to UTC), nulls where nothing is known. */
const SCHEMA = [
  { name: 'root', num_children: 7 },
  text('metric', true),
  text('stores', false),
  { name: 'day', type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' }, repetition_type: 'REQUIRED' },
  text('status', true),
  text('reason', false),
  { name: 'rows', type: 'INT64', repetition_type: 'OPTIONAL' },
  {
    name: 'loaded_at',
    type: 'INT64',
    converted_type: 'TIMESTAMP_MICROS',
    logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
    repetition_type: 'OPTIONAL',
  },
] as const;

/**
 * The coverage table as one Parquet file (a few thousand rows at most: one row group). The writer is loaded by the
 * first table written, so a run that writes no state (a usage error, a refused credential) never loads it.
 */
export async function coverageParquet(rows: readonly CoverageFileRow[], createdBy: string): Promise<Uint8Array> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const buffer = parquetWriteBuffer({
    schema: SCHEMA.map((element) => ({ ...element })),
    columnData: [
      { name: 'metric', data: rows.map((row) => row.metric) },
      { name: 'stores', data: rows.map((row) => row.stores) },
      { name: 'day', data: Int32Array.from(rows, (row) => epochDayOf(row.day)) },
      { name: 'status', data: rows.map((row) => row.status) },
      { name: 'reason', data: rows.map((row) => row.reason) },
      { name: 'rows', data: rows.map((row) => (row.rows === null ? null : BigInt(row.rows))) },
      { name: 'loaded_at', data: rows.map((row) => (row.loadedAt === null ? null : BigInt(row.loadedAt.getTime()) * 1000n)) },
    ],
    codec: 'SNAPPY',
    createdBy,
  });
  return new Uint8Array(buffer);
}
