/**
 * docs/import.md's queries for one unit (a UTC window) and for one store-local day, run as written by DuckDB over the
 * files an import wrote (flat CSV, a Hive Parquet lake): the window over every file is the unit's file, and the
 * local day over the UTC files is what a `--days local` import of that day wrote, a path that shares no query.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCli } from '../helpers/cli.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import { docQueries } from '../helpers/markdown.js';
import { clockEnv } from '../helpers/sandbox-clock.js';

const SECRET = 'Day-Queries-S3cret';
/** The UTC days 2026-11-19..21 are over (a UTC day is, 25 hours after its end). */
const NOW = new Date('2026-11-23T18:28:00Z');
const DAY = '2026-11-20';

let sandbox: Sandbox;
let dir: string;
let duck: DuckDb;

/** A query's rows reduced to what every format shares, sorted: store, instant, zone, local day. */
async function keys(statement: string): Promise<string[]> {
  const rows = await duck.rows(
    `SELECT store_code, epoch_ms("date"::TIMESTAMPTZ) AS instant, zone, "day"::VARCHAR AS day FROM (${statement}) ORDER BY ALL`,
  );
  return rows.map((row) => JSON.stringify(row));
}

beforeAll(async () => {
  sandbox = await startSandbox({ stores: 14, zones: 2, days: 10, clientId: 'day-queries', clientSecret: SECRET, now: () => NOW });
  dir = mkdtempSync(join(tmpdir(), 'day-queries-'));
  const auth = ['--base-url', sandbox.url, '--client-id', sandbox.clientId];
  const env = { ...clockEnv(NOW), AREA_METRICS_CLIENT_SECRET: SECRET };
  const imports = [
    ['--from', '2026-11-19', '--to', '2026-11-21', '-o', join(dir, 'area-metrics-data')],
    ['--from', '2026-11-19', '--to', '2026-11-21', '-o', join(dir, 'lake'), '--layout', 'hive', '-f', 'parquet'],
    ['--days', 'local', '--date', DAY, '-o', join(dir, 'local')],
  ];
  for (const args of imports) {
    const result = await runCli(['traffic', ...auth, ...args], { env });
    expect(result.code, result.stderr).toBe(0);
  }
  duck = await DuckDb.open();
  // The docs' relative paths, from the folder the outputs are in.
  await duck.rows(`SET file_search_path = ${sqlText(dir)}`);
});

afterAll(async () => {
  duck?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("docs/import.md's queries for a unit and for a local day", () => {
  it('flat CSV: the window over every file is the unit file; the local day is what --days local wrote, and differs', async () => {
    const [unitFile, unitWindow, localDay, ...more] = docQueries('duckdb=flat');
    expect(more).toEqual([]);
    const unit = await keys(unitFile!);
    expect(unit.length).toBeGreaterThan(0);
    expect(await keys(unitWindow!)).toEqual(unit);
    // A UTC file holds two local days; the local day's rows come from two files.
    expect(new Set(unit.map((key) => (JSON.parse(key) as { day: string }).day)).size).toBe(2);
    const local = await keys(localDay!);
    expect(local).toEqual(await keys(`SELECT * FROM read_csv(${sqlText(join(dir, 'local/traffic', `${DAY}.csv`))})`));
    expect(local).not.toEqual(unit);
  });

  it('a Hive Parquet lake: the same rows as the flat CSV for the unit and for the local day', async () => {
    const [flatUnit, , flatLocal] = docQueries('duckdb=flat');
    const [unit, localDay, ...more] = docQueries('duckdb=hive');
    expect(more).toEqual([]);
    expect(await keys(unit!)).toEqual(await keys(flatUnit!));
    expect(await keys(localDay!)).toEqual(await keys(flatLocal!));
  });
});
