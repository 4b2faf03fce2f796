import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnNames, METRICS, type MetricName } from '../../src/metrics/descriptors.js';
import { ROOT } from '../helpers/cli.js';
import { clockedCli, noonToday } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { envelope, sendJson, startCraftedServer, type CraftedServer } from '../helpers/crafted-server.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

/**
 * The built binary imports the sandbox (and one crafted answer) as Parquet and as CSV; DuckDB, a reader nobody here
 * wrote, reads both back as a user would.
 */
/** One clock for the days the tests name, the runs and the sandbox: a run across midnight UTC changes nothing. */
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK, SECRET_ENV);
const utcDay = (offsetDays: number) => new Date(CLOCK.getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const FROM = utcDay(-4);
const TO = utcDay(-2);

let crafted: CraftedServer;
let workDir: string;
let duck: DuckDb;

const auth = (baseUrl: string) => ['--base-url', baseUrl, '--client-id', 'parquet-client'];
const files = (dir: string, metric: string, extension: string) => sqlText(join(workDir, dir, metric, `*.${extension}`));

const sandbox = useSandbox({ stores: 9, zones: 5, days: 10, seed: 11, clientId: 'parquet-client', now: () => CLOCK });

beforeAll(async () => {
  crafted = await startCraftedServer();
  workDir = await mkdtemp(join(tmpdir(), 'parquet-e2e-'));
  duck = await DuckDb.open();
  const imports = await Promise.all(
    (['csv', 'parquet'] as const).map((format) =>
      runCli(['all', ...auth(sandbox.url), '--from', FROM, '--to', TO, '-f', format, '-o', join(workDir, format), '--page-size', '4']),
    ),
  );
  for (const result of imports) expect(result.code, result.stderr).toBe(0);
});
afterAll(async () => {
  duck.close();
  await crafted.close();
  await rm(workDir, { recursive: true, force: true });
});

/** The column types a user gets from DuckDB, by column name. */
async function typesOf(path: string): Promise<Record<string, unknown>> {
  const rows = await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${path}))`);
  return Object.fromEntries(rows.map((row) => [String(row.column_name), row.column_type]));
}

/** The same row in both files as comparable text: the instant in microseconds, the decimal at its scale. */
function comparable(metric: MetricName, source: 'parquet' | 'csv'): string {
  const read =
    source === 'parquet'
      ? `read_parquet(${files('parquet', metric, 'parquet')})`
      : `read_csv(${files('csv', metric, 'csv')}, all_varchar = true)`;
  const typed = (column: string, type: string) => (source === 'parquet' ? column : `${column}::${type}`);
  const values = METRICS[metric].columns.map((column) => {
    const type = { int64: 'BIGINT', int32: 'INTEGER', string: 'VARCHAR' }[column.parquet as string] ?? 'DECIMAL(6,5)';
    return `${typed(column.name, type)}::VARCHAR AS ${column.name}`;
  });
  return (
    `SELECT store_code, epoch_us(${typed('date', 'TIMESTAMPTZ')})::VARCHAR AS date_us, ${typed('day', 'DATE')}::VARCHAR AS day, ` +
    `granularity, zone, ${values.join(', ')} FROM ${read}`
  );
}

describe('-f parquet over a sandbox import', () => {
  it.each(METRIC_NAMES)('%s: the CSV columns, typed, one file per day', async (metric) => {
    const expected: Record<string, string> = {
      store_code: 'VARCHAR',
      date: 'TIMESTAMP WITH TIME ZONE',
      day: 'DATE',
      granularity: 'VARCHAR',
      zone: 'VARCHAR',
    };
    Object.assign(
      expected,
      {
        'unique-users': { unique_users: 'BIGINT' },
        'avg-screen-time': { avg_screen_time: 'VARCHAR', avg_screen_time_seconds: 'INTEGER' },
        traffic: { traffic_pct: 'DECIMAL(6,5)' },
      }[metric],
    );
    const types = await typesOf(files('parquet', metric, 'parquet'));
    expect(Object.keys(types)).toEqual(columnNames(METRICS[metric]));
    expect(types).toEqual(expected);
    for (const day of [FROM, utcDay(-3), TO])
      expect((await stat(join(workDir, 'parquet', metric, `${day}.parquet`))).size).toBeGreaterThan(0);
  });

  it.each(METRIC_NAMES)('%s: the same rows in the same order as the CSV', async (metric) => {
    const fromParquet = await duck.rows(comparable(metric, 'parquet'));
    const fromCsv = await duck.rows(comparable(metric, 'csv'));
    expect(fromParquet.length).toBeGreaterThan(9 * 3);
    expect(fromParquet).toEqual(fromCsv);
  });

  it('row counts and per-column sums equal the CSV of the same import', async () => {
    const totals = async (metric: MetricName, sums: string, source: 'parquet' | 'csv') => {
      const read =
        source === 'parquet'
          ? `read_parquet(${files('parquet', metric, 'parquet')})`
          : `read_csv(${files('csv', metric, 'csv')}${metric === 'traffic' ? ", types = {'traffic_pct': 'DECIMAL(6,5)'}" : ''})`;
      return duck.rows(`SELECT count(*)::VARCHAR AS n, ${sums} FROM ${read}`);
    };
    const sums: Record<MetricName, string> = {
      'unique-users': 'sum(unique_users)::VARCHAR AS total',
      'avg-screen-time': 'sum(avg_screen_time_seconds)::VARCHAR AS total',
      traffic: 'sum(traffic_pct)::VARCHAR AS total',
    };
    for (const metric of METRIC_NAMES) {
      const parquet = await totals(metric, sums[metric], 'parquet');
      expect(parquet).toEqual(await totals(metric, sums[metric], 'csv'));
      expect(Number(parquet[0]?.total)).toBeGreaterThan(0);
    }
  });

  it('a re-run with the same data leaves the file untouched (same bytes, inode and mtime) and says so', async () => {
    const path = join(workDir, 'parquet', 'traffic', `${TO}.parquet`);
    const before = await stat(path);
    const bytes = await readFile(path);
    const result = await runCli(['traffic', ...auth(sandbox.url), '--date', TO, '-f', 'parquet', '-o', join(workDir, 'parquet')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`${TO}.parquet (unchanged)`);
    const after = await stat(path);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect((await readFile(path)).equals(bytes)).toBe(true);
  });
});

describe('-f parquet over a crafted answer', () => {
  const DAY = utcDay(-3);
  const NEXT = utcDay(-2);
  // Far-east and far-west stores: local midnight of the next day at +14:00, and of the day itself at -11:00.
  const results = [
    {
      store_code: 'EAST',
      date: `${NEXT}T00:00:00+14:00`,
      granularity: 'daily',
      values: [
        { zone: 'Café "Central", Ground floor', traffic_pct: '0.10000' },
        { zone: '[11] 食品売り場', traffic_pct: '0.90000' },
      ],
    },
    {
      store_code: 'WEST',
      date: `${DAY}T00:00:00-11:00`,
      granularity: 'daily',
      values: [{ zone: 'Wine, Beer & Spirits', traffic_pct: '1.00000' }],
    },
  ];

  beforeAll(async () => {
    const base = crafted.route('parquet', (_request, response) => sendJson(response, 200, envelope(results)));
    for (const format of ['csv', 'parquet']) {
      const result = await runCli(['traffic', ...auth(base), '--date', DAY, '-f', format, '-o', join(workDir, `crafted-${format}`)]);
      expect(result.code, result.stderr).toBe(0);
    }
  });

  const parquetFile = () => sqlText(join(workDir, 'crafted-parquet', 'traffic', `${DAY}.parquet`));

  it('keeps +14:00 and -11:00 instants, local days, awkward zone names and 0.10000 as exactly 0.1', async () => {
    const rows = await duck.rows(
      `SELECT store_code, epoch_us(date)::VARCHAR AS date_us, day::VARCHAR AS day, zone, traffic_pct::VARCHAR AS pct, traffic_pct = 0.1 AS tenth FROM read_parquet(${parquetFile()})`,
    );
    const micros = (date: string) => String(Date.parse(date) * 1000);
    expect(rows).toEqual([
      {
        store_code: 'EAST',
        date_us: micros(`${DAY}T10:00:00Z`),
        day: NEXT,
        zone: 'Café "Central", Ground floor',
        pct: '0.10000',
        tenth: true,
      },
      { store_code: 'EAST', date_us: micros(`${DAY}T10:00:00Z`), day: NEXT, zone: '[11] 食品売り場', pct: '0.90000', tenth: false },
      { store_code: 'WEST', date_us: micros(`${DAY}T11:00:00Z`), day: DAY, zone: 'Wine, Beer & Spirits', pct: '1.00000', tenth: false },
    ]);
    // The CSV's `date` text, read as the instant it names, is the Parquet's instant.
    const csvInstants = await duck.rows(
      `SELECT epoch_us(date::TIMESTAMPTZ)::VARCHAR AS date_us FROM read_csv(${sqlText(join(workDir, 'crafted-csv', 'traffic', `${DAY}.csv`))}, all_varchar = true)`,
    );
    expect(csvInstants.map((row) => row.date_us)).toEqual(rows.map((row) => row.date_us));
    const [decimal] = await duck.rows(`SELECT typeof(traffic_pct) AS type FROM read_parquet(${parquetFile()}) LIMIT 1`);
    expect(decimal?.type).toBe('DECIMAL(6,5)');
  });

  it('writes min/max statistics DuckDB reads as the right DECIMAL and TIMESTAMP values', async () => {
    const stats = await duck.rows(
      `SELECT path_in_schema AS name, stats_min_value AS min, stats_max_value AS max FROM parquet_metadata(${parquetFile()})`,
    );
    const of = (name: string) => stats.find((row) => row.name === name);
    expect(of('traffic_pct')).toEqual({ name: 'traffic_pct', min: '0.10000', max: '1.00000' });
    expect(of('date')).toEqual({ name: 'date', min: `${DAY} 10:00:00+00`, max: `${DAY} 11:00:00+00` });
    expect(of('day')).toEqual({ name: 'day', min: DAY, max: NEXT });
  });

  it('says in its metadata what wrote it, the metric and the requested window', async () => {
    const rows = await duck.rows(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${parquetFile()})`);
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(Object.fromEntries(rows.map((row) => [row.key, row.value]))).toEqual({
      'area_metrics.version': version,
      'area_metrics.metric': 'traffic',
      'area_metrics.datetime_gte': `${DAY}T00:00:00Z`,
      'area_metrics.datetime_lte': `${DAY}T23:59:59Z`,
    });
  });
});

describe('-f parquet with a value DECIMAL(6,5) cannot hold', () => {
  it('fails the unit (exit 5) naming the value, writes no file, and never rounds it', async () => {
    const DAY = utcDay(-3);
    const precise = [
      { store_code: 'S1', date: `${DAY}T12:00:00Z`, granularity: 'daily', values: [{ zone: 'Z', traffic_pct: '0.123456' }] },
    ];
    const base = crafted.route('too-precise', (_request, response) => sendJson(response, 200, envelope(precise)));
    const result = await runCli(['traffic', ...auth(base), '--date', DAY, '-f', 'parquet', '-o', join(workDir, 'precise')]);
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).toContain('traffic_pct "0.123456" has more than 5 decimal places');
    await expect(stat(join(workDir, 'precise', 'traffic', `${DAY}.parquet`))).rejects.toThrow(/ENOENT/);
  });
});

describe('-f parquet where it cannot go', () => {
  it.each([
    [['-o', '-'], /^Parquet is written to files only/],
    [['--shape', 'results'], /^--shape results is NDJSON only, not parquet/],
  ])('%j is a usage error (exit 2, one line)', async (extra, message) => {
    const result = await runCli(['traffic', ...auth(sandbox.url), '--date', TO, '-f', 'parquet', '-o', join(workDir, 'nowhere'), ...extra]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.replace(/^error: /, '')).toMatch(message);
  });
});
