import type { Client } from 'pg';
import { describe, expect, it } from 'vitest';
import { Session } from '../../../src/destination/postgres/session.js';
import { PostgresSink } from '../../../src/destination/postgres/sink.js';
import { ensureMetricTable, ensureSchema } from '../../../src/destination/postgres/tables.js';
import { unitRows } from '../../../src/destination/postgres/unit-rows.js';
import { parsePostgresUrl, resolveTarget } from '../../../src/destination/postgres/url.js';
import { silentLogger } from '../../../src/log/logger.js';
import { METRICS, typedColumns } from '../../../src/metrics/descriptors.js';
import type { UnitContent } from '../../../src/output/sinks.js';
import type { DayMode } from '../../../src/window/day-mode.js';
import { docQueries } from '../../helpers/markdown.js';
import { usePostgres, warnIfPostgresMissing, type TestPostgres } from '../../helpers/postgres.js';

/**
 * The sink against a real server, in-process: which rows a unit's load replaces (a UTC day's, a local day's across
 * every offset, a store's), that the tables' indexes find them (this release's and an earlier one's), and that an
 * unchanged unit is left untouched while one whose rows are gone is loaded again.
 */
const skip = warnIfPostgresMissing('the PostgreSQL sink tests');
const traffic = METRICS.traffic;
const COLUMNS = new Map([['traffic', typedColumns(traffic)]]);
let server: TestPostgres;
let schemas = 0;

/** A CSV row of traffic: the local midnight of `day` at `offset`, unless `date` says otherwise. */
const row = (store: string, day: string, offset: string, zone: string, pct: string, date = `${day}T00:00:00${offset}`): string =>
  `${store},${date},${day},daily,${zone},${pct}\n`;

const unitOf = (day: string, rows: readonly string[], storeCode?: string): UnitContent => ({
  unit: { metric: { name: 'traffic' }, day, ...(storeCode === undefined ? {} : { storeCode }) },
  header: undefined,
  pieces: rows.map((line) => Buffer.from(line)),
  rejected: [],
  rowCount: rows.length,
});

/** A fresh schema with the tool's tables, a session on it and a sink of `mode`'s days. */
async function sinkOn(mode: DayMode, makeTable = true): Promise<{ schema: string; session: Session; sink: PostgresSink }> {
  const schema = `sink_${++schemas}`;
  const url = parsePostgresUrl(server.url({ params: { schema } }), '-o');
  const session = new Session(url, resolveTarget(url, {}), { env: {}, retries: 0, logger: silentLogger });
  await session.use('setup', async (client) => {
    await ensureSchema(client, schema);
    if (makeTable) await ensureMetricTable(client, schema, 'traffic', typedColumns(traffic));
  });
  return { schema, session, sink: new PostgresSink([session], COLUMNS, mode) };
}

/** The table's rows as `store date zone pct`, sorted, the instant in UTC. */
async function rowsOf(schema: string): Promise<string[]> {
  const rows = await server.query<{ line: string }>(
    `SELECT concat_ws(' ', store_code, to_char(date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI'), day, zone, traffic_pct) AS line FROM ${schema}.traffic`,
  );
  return rows.map((found) => found.line).sort();
}

/** The blocks `sql` reads, run with sequential scans priced out: a range of an index reads a few, a whole index all. */
async function blocksRead(client: Client, sql: string, values: unknown[]): Promise<number> {
  await client.query('SET enable_seqscan = off');
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
      values,
    );
    const plan = rows[0]!['QUERY PLAN'][0].Plan;
    return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  } finally {
    await client.query('RESET enable_seqscan');
  }
}

/** traffic's table as an earlier release made it: the key store first, a B-tree on `day`. */
const olderTable = (schema: string): string =>
  `CREATE TABLE ${schema}.traffic (store_code text NOT NULL, date timestamptz NOT NULL, day date NOT NULL, granularity text NOT NULL, ` +
  `zone text NOT NULL, traffic_pct numeric(6,5) NOT NULL, PRIMARY KEY (store_code, date, zone)); CREATE INDEX traffic_day ON ${schema}.traffic (day)`;

/** A schema's indexes as `pg_indexes` defines them, the schema's name left out. */
async function indexesOf(schema: string): Promise<string[]> {
  const found = await server.query<{ def: string }>('SELECT indexdef AS def FROM pg_indexes WHERE schemaname = $1 ORDER BY 1', [schema]);
  return found.map((index) => index.def.replaceAll(`${schema}.`, ''));
}

describe.skipIf(skip)('units loaded into a table', () => {
  // The file's helpers above read `server`: the cluster's live view, started before these tests.
  server = usePostgres();

  it("a local day's unit replaces that day's rows at every offset, from +14:00 to -12:00 hourly, and no neighbour's", async () => {
    const { schema, session, sink } = await sinkOn('local');
    try {
      const neighbours = [row('S1', '2026-11-19', '-12:00', 'A', '0.1'), row('S1', '2026-11-21', '+14:00', 'A', '0.2')];
      const first = [
        row('S1', '2026-11-20', '+14:00', 'A', '0.3'),
        row('S2', '2026-11-20', '-12:00', 'A', '0.4', '2026-11-20T23:00:00-12:00'),
      ];
      for (const [day, line] of [
        ['2026-11-19', neighbours[0]!],
        ['2026-11-21', neighbours[1]!],
      ] as const)
        await sink.commit(unitOf(day, [line]));
      await sink.commit(unitOf('2026-11-20', first));
      expect(await rowsOf(schema)).toEqual([
        'S1 2026-11-19T10:00 2026-11-20 A 0.30000',
        'S1 2026-11-19T12:00 2026-11-19 A 0.10000',
        'S1 2026-11-20T10:00 2026-11-21 A 0.20000',
        'S2 2026-11-21T11:00 2026-11-20 A 0.40000',
      ]);
      // The corrected day: both its rows replaced (the earliest and the latest instant a local day holds), no other.
      await sink.commit(unitOf('2026-11-20', [row('S3', '2026-11-20', '+00:00', 'B', '0.5')]));
      expect(await rowsOf(schema)).toEqual([
        'S1 2026-11-19T12:00 2026-11-19 A 0.10000',
        'S1 2026-11-20T10:00 2026-11-21 A 0.20000',
        'S3 2026-11-20T00:00 2026-11-20 B 0.50000',
      ]);
    } finally {
      await session.close();
    }
  });

  it.each([
    ['this release', undefined],
    ['an earlier release (key store first, a B-tree on day)', olderTable],
  ])(
    "a table of %s: every unit's rows, and a loader's day, found through an index (a few blocks of a big table); loads, replaces and re-runs",
    async (_what, older) => {
      const { schema, session, sink } = await sinkOn('utc', older === undefined);
      try {
        if (older !== undefined) await server.query(older(schema));
        const before = await indexesOf(schema);
        const day = [
          row('S1', '2026-11-20', '+02:00', 'A', '0.1', '2026-11-20T08:00:00+02:00'),
          row('S2', '2026-11-20', '-05:00', 'A', '0.2'),
        ];
        const other = [row('S1', '2026-11-21', '+02:00', 'A', '0.3', '2026-11-21T08:00:00+02:00')];
        expect((await sink.commit(unitOf('2026-11-20', day))).changed).toBe(true);
        expect((await sink.commit(unitOf('2026-11-21', other))).changed).toBe(true);
        expect((await sink.commit(unitOf('2026-11-20', day))).changed).toBe(false);
        // A store's unit replaces that store's rows of the day only.
        expect((await sink.commit(unitOf('2026-11-20', [row('S2', '2026-11-20', '-05:00', 'A', '0.9')], 'S2'))).changed).toBe(true);
        expect(await rowsOf(schema)).toEqual([
          'S1 2026-11-20T06:00 2026-11-20 A 0.10000',
          'S1 2026-11-21T06:00 2026-11-21 A 0.30000',
          'S2 2026-11-20T05:00 2026-11-20 A 0.90000',
        ]);
        // The table is used as it was made: its indexes are the ones it had.
        expect(await indexesOf(schema)).toEqual(before);

        // Two months of 2,000 stores beside them (in load order, a day at a time): a day's rows are a small part of it.
        await server.query(
          `INSERT INTO ${schema}.traffic SELECT 'T' || store, day + interval '1 hour', day, 'daily', 'Z', 0.5 ` +
            `FROM generate_series(DATE '2026-09-01', DATE '2026-10-31', interval '1 day') AS day, generate_series(1, 2000) AS store ORDER BY day`,
        );
        await server.query(`VACUUM ANALYZE ${schema}.traffic`);
        const [{ pages }] = (await server.query<{ pages: number }>(
          `SELECT (pg_relation_size($1::regclass) / current_setting('block_size')::int)::int AS pages`,
          [`${schema}.traffic`],
        )) as [{ pages: number }];
        await session.use('plans', async (client) => {
          for (const [mode, store] of [
            ['utc', ''],
            ['utc', 'T7'],
            ['local', ''],
            ['local', 'T7'],
          ] as const) {
            const { where, values } = unitRows(mode, { metric: 'traffic', day: '2026-10-10', store });
            expect(await blocksRead(client, `SELECT * FROM ${schema}.traffic WHERE ${where}`, values)).toBeLessThan(pages / 4);
          }
          // The docs' query of a store-local day, as a loader writes it.
          expect(await blocksRead(client, `SELECT * FROM ${schema}.traffic WHERE day = DATE '2026-10-10'`, [])).toBeLessThan(pages / 4);
        });
      } finally {
        await session.close();
      }
    },
  );

  it('an unchanged unit is left as it is; one whose rows were deleted behind its back, or that holds none, is judged right', async () => {
    const { schema, session, sink } = await sinkOn('utc');
    try {
      const day = [row('S1', '2026-11-20', '+02:00', 'A', '0.1', '2026-11-20T08:00:00+02:00')];
      await sink.commit(unitOf('2026-11-20', day));
      const versions = async (): Promise<string[]> =>
        (await server.query<{ v: string }>(`SELECT xmin::text AS v FROM ${schema}.traffic`)).map((found) => found.v);
      const first = await versions();
      expect((await sink.commit(unitOf('2026-11-20', day))).changed).toBe(false);
      expect(await versions()).toEqual(first);
      // The day pruned by hand: its coverage no longer holds, and the unit is loaded again.
      await server.query(`DELETE FROM ${schema}.traffic WHERE day = '2026-11-20'`);
      expect((await sink.commit(unitOf('2026-11-20', day))).changed).toBe(true);
      expect(await rowsOf(schema)).toEqual(['S1 2026-11-20T06:00 2026-11-20 A 0.10000']);
      // A unit of set-aside records alone (no rows): unchanged is unchanged, with no row to find.
      const setAside: UnitContent = {
        ...unitOf('2026-11-22', []),
        rejected: [{ field: 'traffic_pct', value: 'x', reason: 'not a number', record: { store_code: 'S9' } }],
      };
      expect((await sink.commit(setAside)).changed).toBe(true);
      expect((await sink.commit(setAside)).changed).toBe(false);
    } finally {
      await session.close();
    }
  });

  it("docs/import.md's rebuild of an earlier release's table gives this release's indexes, rows kept", async () => {
    const made = await sinkOn('utc');
    const older = await sinkOn('utc', false);
    try {
      await server.query(olderTable(older.schema));
      const day = [row('S1', '2026-11-20', '+02:00', 'A', '0.1', '2026-11-20T08:00:00+02:00')];
      await older.sink.commit(unitOf('2026-11-20', day));
      for (const statement of docQueries('postgres-rebuild')) await server.query(statement.replaceAll('area_metrics.', `${older.schema}.`));
      expect(await indexesOf(older.schema)).toEqual(await indexesOf(made.schema));
      expect(await rowsOf(older.schema)).toEqual(['S1 2026-11-20T06:00 2026-11-20 A 0.10000']);
      expect((await older.sink.commit(unitOf('2026-11-20', day))).changed).toBe(false);
    } finally {
      await Promise.all([made.session.close(), older.session.close()]);
    }
  });
});
