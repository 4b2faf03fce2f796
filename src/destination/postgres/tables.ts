import type { Client } from 'pg';
import { errnoCode, UsageError } from '../../errors.js';
import type { ParquetColumn, ParquetColumnType } from '../../output/parquet.js';
import { inTransaction } from './session.js';

/** An identifier as SQL text, quoted: a schema or table name is never spliced in raw. */
export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A metric's table: its name with `_` for `-` (`unique-users` is `unique_users`), a name SQL needs no quotes for. */
export function tableNameOf(metric: string): string {
  return metric.replaceAll('-', '_');
}

/** The tool's own tables beside the data: the state, each unit's coverage, the run manifests, the set-aside records. */
export const OWN_TABLES = {
  state: 'area_metrics_state',
  units: 'area_metrics_units',
  runs: 'area_metrics_runs',
  rejected: 'area_metrics_rejected',
} as const;

/** The SQL type of each Parquet column type, as `format_type` names it (a decimal's is `numeric(p,s)`). */
const SQL_TYPES: Readonly<Record<Exclude<ParquetColumnType, `decimal(${number},${number})`>, string>> = {
  string: 'text',
  timestamp: 'timestamp with time zone',
  date: 'date',
  int32: 'integer',
  int64: 'bigint',
};

export function sqlTypeOf(type: ParquetColumnType): string {
  return type.startsWith('decimal(') ? type.replace('decimal', 'numeric') : SQL_TYPES[type as keyof typeof SQL_TYPES];
}

/** The unit's grain, one row per store, instant and zone, as the contract names it. */
const PRIMARY_KEY = ['store_code', 'date', 'zone'];

/**
 * The index a unit's rows and a loader's `day = ...` are found through: BRIN, a summary per block range, since a table
 * is loaded a day at a time (a day's rows lie together); a B-tree on `day` costs each COPY a second tree to insert into.
 * Ranges of 32 blocks (256 kB, a few thousand rows) keep a small vendor's day from reading many others'; each range
 * summarized as soon as the load has moved past it, not at the next vacuum.
 */
const DAY_INDEX = 'brin (day) WITH (pages_per_range = 32, autosummarize = on)';

/** The columns of the tool's own tables. */
const OWN_TABLE_COLUMNS: Readonly<Record<keyof typeof OWN_TABLES, string>> = {
  state: 'name text PRIMARY KEY, body text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now()',
  // A unit's coverage: what was loaded for it, committed with its rows. `store` is '' for a unit of every store.
  units:
    'metric text NOT NULL, day date NOT NULL, store text NOT NULL, sha256 text NOT NULL, rows bigint NOT NULL, ' +
    'bytes bigint NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (metric, day, store)',
  // `seq`: the order rows became visible, what a loader follows (`manifests.ts`).
  runs:
    'seq bigint NOT NULL UNIQUE, run_id text PRIMARY KEY, started_at timestamptz NOT NULL, ended_at timestamptz NOT NULL, ' +
    'exit_code integer NOT NULL, manifest jsonb NOT NULL',
  rejected: 'metric text NOT NULL, day date NOT NULL, store text NOT NULL, record jsonb NOT NULL',
};

/** The names of the tables a schema holds. */
async function tablesIn(client: Client, schema: string): Promise<Set<string>> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')",
    [schema],
  );
  return new Set(rows.map((row) => row.name));
}

/**
 * The schema and the tool's own tables, each made only when it is missing: creating needs CREATE (on the database
 * for the schema, on the schema for a table), and a role given only INSERT, DELETE and SELECT on tables made for it
 * never asks for it.
 */
export async function ensureSchema(client: Client, schema: string): Promise<void> {
  const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  if (found.rowCount === 0) await createSchema(client, schema);
  const existing = await tablesIn(client, schema);
  for (const [key, table] of Object.entries(OWN_TABLES) as [keyof typeof OWN_TABLES, string][]) {
    if (!existing.has(table)) await client.query(`CREATE TABLE IF NOT EXISTS ${quoteName(schema)}.${table} (${OWN_TABLE_COLUMNS[key]})`);
  }
  await ensureRunSequence(client, schema);
}

/**
 * The runs table of an earlier release, which has no `seq`, given one in place: the column added, its rows numbered
 * in run-id order (their start order: the best order there is for rows already there), then made NOT NULL and
 * UNIQUE; all in one transaction with the table locked, so two runs never both number it. Needs the table's owner.
 */
export async function ensureRunSequence(client: Client, schema: string): Promise<void> {
  const table = `${quoteName(schema)}.${OWN_TABLES.runs}`;
  const hasSeq = async (): Promise<boolean> => (await columnsOf(client, schema, OWN_TABLES.runs)).has('seq');
  if (await hasSeq()) return;
  await inTransaction(client, async () => {
    await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    if (await hasSeq()) return;
    await client.query(`ALTER TABLE ${table} ADD COLUMN seq bigint`);
    await client.query(
      `UPDATE ${table} AS r SET seq = numbered.n FROM (SELECT run_id, row_number() OVER (ORDER BY run_id) AS n FROM ${table}) AS numbered ` +
        'WHERE r.run_id = numbered.run_id',
    );
    await client.query(`ALTER TABLE ${table} ALTER COLUMN seq SET NOT NULL, ADD UNIQUE (seq)`);
  });
}

/**
 * The schema made: a role without CREATE on the database is refused (42501), and what is wrong then is most often a
 * mistyped `?schema=`, so the refusal becomes the server's own code for a schema that is not there (3F000).
 */
async function createSchema(client: Client, schema: string): Promise<void> {
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteName(schema)}`);
  } catch (error) {
    if (errnoCode(error) !== '42501') throw error;
    throw Object.assign(new Error(`schema ${JSON.stringify(schema)} does not exist`), { code: '3F000', cause: error });
  }
}

/** The columns a table has, with their types as `format_type` names them; empty when there is no such table. */
async function columnsOf(client: Client, schema: string, table: string): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name: string; type: string }>(
    'SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a ' +
      'JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace ' +
      'WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum',
    [schema, table],
  );
  return new Map(rows.map((row) => [row.name, row.type]));
}

/** How the table's columns differ from the metric's, in words; empty when they are the same. */
export function columnDifferences(expected: readonly ParquetColumn[], found: ReadonlyMap<string, string>): string[] {
  const wanted = new Map(expected.map((column) => [column.name, sqlTypeOf(column.type)]));
  const differences: string[] = [];
  for (const [name, type] of wanted) {
    const actual = found.get(name);
    if (actual === undefined) differences.push(`${name} missing`);
    else if (actual !== type) differences.push(`${name} is ${actual}, not ${type}`);
  }
  for (const name of found.keys()) if (!wanted.has(name)) differences.push(`${name} is not the tool's`);
  return differences;
}

/**
 * The metric's table with its typed columns, its primary key on the unit's grain and an index for the day (a unit's
 * rows are found through it, UTC day or local), made when missing. One that exists with other columns is exit 2
 * naming them: a table is never altered behind its users' backs. One made by an earlier release (a B-tree on `day`)
 * is used as it is: its index serves the same conditions.
 */
export async function ensureMetricTable(client: Client, schema: string, table: string, columns: readonly ParquetColumn[]): Promise<void> {
  const found = await columnsOf(client, schema, table);
  const qualified = `${quoteName(schema)}.${quoteName(table)}`;
  if (found.size > 0) {
    const differences = columnDifferences(columns, found);
    if (differences.length > 0) {
      throw new UsageError(`table ${schema}.${table} has other columns than the tool writes: ${differences.join('; ')}; drop or rename it`);
    }
    return;
  }
  const definitions = columns.map((column) => `${quoteName(column.name)} ${sqlTypeOf(column.type)} NOT NULL`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${qualified} (${definitions.join(', ')}, PRIMARY KEY (${PRIMARY_KEY.join(', ')}))`);
  await client.query(`CREATE INDEX IF NOT EXISTS ${quoteName(`${table}_day`)} ON ${qualified} USING ${DAY_INDEX}`);
}
