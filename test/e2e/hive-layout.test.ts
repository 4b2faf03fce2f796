/**
 * `--layout hive`: the BUILT binary against the sandbox writes `metric=<metric>/dt=<day>/...` in a folder and in a
 * bucket (s3rver), in every format, and DuckDB with `hive_partitioning` reads metric and dt back as columns, every
 * row there; the state keeps the layout, and catch-up, status, accept and reopen work the same in it.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, type CliResult } from '../helpers/cli.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import { deadPid } from '../helpers/pids.js';
import { S3_SECRET_ACCESS_KEY, startS3, type S3Harness } from '../helpers/s3.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { dataFiles, useTempDirs } from '../helpers/tmp.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const STATE = '.area-metrics-state.json';
/** One clock for the sandbox and every run: at noon (UTC) the day before yesterday is over. */
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK, SECRET_ENV);
const tempDir = useTempDirs('hive-layout-');
const daysAgo = daysBefore(CLOCK);
const DAYS = [daysAgo(3), daysAgo(2)];
const FORMATS = ['csv', 'ndjson', 'parquet'] as const;

let s3: S3Harness;
let duck: DuckDb;
/** The flat CSV import of DAYS (the reference), and the hive import of the same days in each format. */
let flat: string;
const hive: Record<string, string> = {};

const api = (): string[] => ['--base-url', sandbox.url, '--client-id', sandbox.clientId];

async function imported(args: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): Promise<CliResult> {
  const result = await runCli([...args, ...api()], { env, timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

const sandbox = useSandbox({ port: 0, stores: 3, zones: 3, days: 8, seed: 5, clientId: 'hive-client', ...servingDaysInProgress(CLOCK) });

beforeAll(async () => {
  assertBuilt();
  [s3, duck] = await Promise.all([startS3(), DuckDb.open()]);
  // Made here and removed after all: every test reads them.
  flat = await mkdtemp(join(tmpdir(), 'hive-layout-flat-'));
  for (const format of FORMATS) hive[format] = await mkdtemp(join(tmpdir(), `hive-layout-${format}-`));
  const window = ['all', '--from', DAYS[0]!, '--to', DAYS[1]!];
  await Promise.all([
    imported([...window, '-o', flat]),
    ...FORMATS.map((format) => imported([...window, '-o', hive[format]!, '-f', format, '--layout', 'hive'])),
  ]);
}, 120_000);
afterAll(async () => {
  duck?.close();
  await Promise.all([s3?.close(), ...[flat, ...Object.values(hive)].map((dir) => dir && rm(dir, { recursive: true, force: true }))]);
});

/** How DuckDB reads each format of a hive folder, partitions as columns; `_runs/` and `_rejected/` are not matched. */
function hiveRead(dir: string, format: (typeof FORMATS)[number]): string {
  const files = sqlText(`${dir}/metric=*/dt=*/*.${format}`);
  const options = 'hive_partitioning = true, union_by_name = true';
  if (format === 'parquet') return `read_parquet(${files}, ${options})`;
  if (format === 'csv') return `read_csv(${files}, ${options})`;
  return `read_json(${files}, format = 'newline_delimited', ${options})`;
}

/**
 * Per metric and day: the rows, the (store, zone) keys in order and the sum of the values, as text; a file's rows are
 * all there and nowhere else exactly when these agree.
 */
const SUMMARY = `metric, dt::VARCHAR AS dt, count(*)::INTEGER AS rows,
  string_agg(store_code || '/' || zone, ',' ORDER BY store_code, zone) AS keys,
  (sum(coalesce(unique_users, 0)) + sum(coalesce(avg_screen_time_seconds, 0)))::BIGINT AS whole_values,
  round(sum(coalesce(traffic_pct, 0))::DOUBLE, 4) AS traffic_sum`;

async function summary(from: string): Promise<Record<string, unknown>[]> {
  return duck.rows(`SELECT ${SUMMARY} FROM ${from} GROUP BY ALL ORDER BY metric, dt`);
}

/** The flat reference, metric and day taken from each file's path. */
function flatRead(dir: string): string {
  return (
    `(SELECT *, regexp_extract(filename, '/([a-z-]+)/[^/]+$', 1) AS metric, regexp_extract(filename, '(\\d{4}-\\d{2}-\\d{2})\\.csv$', 1)::DATE AS dt ` +
    `FROM read_csv(${sqlText(`${dir}/*/*.csv`)}, filename = true, union_by_name = true))`
  );
}

describe('--layout hive in a folder', () => {
  it.each(FORMATS)('%s: DuckDB reads metric and dt as columns (dt a DATE), every row of the flat import there', async (format) => {
    const expected = await summary(flatRead(flat));
    expect(expected).toHaveLength(6);
    expect(await summary(hiveRead(hive[format]!, format))).toEqual(expected);
    const [types] = await duck.rows(`SELECT typeof(metric) AS metric, typeof(dt) AS dt FROM ${hiveRead(hive[format]!, format)} LIMIT 1`);
    expect(types).toEqual({ metric: 'VARCHAR', dt: 'DATE' });
  });

  it('names each file metric=<metric>/dt=<day>/<metric>_<day>.<ext>, the manifest under _runs/ beside them', async () => {
    const metrics = ['avg-screen-time', 'traffic', 'unique-users'];
    expect(await dataFiles(hive.parquet!)).toEqual(
      metrics.flatMap((metric) => DAYS.map((day) => `metric=${metric}/dt=${day}/${metric}_${day}.parquet`)),
    );
    // The same bytes as the flat layout's files: only the names differ.
    for (const day of DAYS)
      expect(await readFile(join(hive.csv!, `metric=traffic/dt=${day}/traffic_${day}.csv`))).toEqual(
        await readFile(join(flat, 'traffic', `${day}.csv`)),
      );
    expect(JSON.parse(await readFile(join(hive.csv!, STATE), 'utf8'))).toMatchObject({ layout: 'hive' });
  });

  it('with --days local, dt is the store-local day: every row of a partition has day = dt', async () => {
    const out = await tempDir();
    await imported(['traffic', '--date', daysAgo(3), '--days', 'local', '--layout', 'hive', '-f', 'parquet', '-o', out]);
    const [row] = await duck.rows(
      `SELECT count(*)::INTEGER AS rows, count(*) FILTER (WHERE day <> dt)::INTEGER AS other_days, min(dt)::VARCHAR AS dt FROM ${hiveRead(out, 'parquet')}`,
    );
    expect(row).toMatchObject({ other_days: 0, dt: daysAgo(3) });
    expect(row!.rows).toBeGreaterThan(0);
  });
});

describe('--layout hive in a bucket', () => {
  it("puts the same objects under the prefix; DuckDB reads them back partitioned; the manifest checksums are the objects'", async () => {
    const output = `s3://${s3.bucket}/lake/area-metrics`;
    const result = await runCli(['all', '--from', DAYS[0]!, '--to', DAYS[1]!, '-o', output, '-f', 'parquet', ...api()], {
      env: s3.env({ AREA_METRICS_LAYOUT: 'hive' }),
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain(S3_SECRET_ACCESS_KEY);
    const objects = await s3.objects('lake/area-metrics');
    objects.delete(STATE);
    const files = await dataFiles(hive.parquet!);
    expect([...objects.keys()]).toEqual(files.filter((path) => path !== STATE));
    // A copy of the bucket, as a sync or a mount would give it, read as a lake.
    const copy = await tempDir();
    for (const [key, body] of objects) {
      expect(body.equals(await readFile(join(hive.parquet!, key))), key).toBe(true);
      await mkdir(dirname(join(copy, key)), { recursive: true });
      await writeFile(join(copy, key), body);
    }
    expect(await summary(hiveRead(copy, 'parquet'))).toEqual(await summary(flatRead(flat)));

    const manifests = await s3.objects('lake/area-metrics/_runs');
    expect(manifests.size).toBe(1);
    const manifest = JSON.parse([...manifests.values()][0]!.toString()) as {
      layout: string;
      units: { path: string; sha256: string; bytes: number }[];
    };
    expect(manifest.layout).toBe('hive');
    expect(manifest.units).toHaveLength(6);
    for (const unit of manifest.units) {
      const body = objects.get(unit.path)!;
      expect(unit.sha256).toBe(createHash('sha256').update(body).digest('hex'));
      expect(unit.bytes).toBe(body.length);
      expect((await s3.head(`lake/area-metrics/${unit.path}`))?.metadata['area-metrics-sha256']).toBe(unit.sha256);
    }
  });
});

describe('the state keeps the layout', () => {
  it('--catch-up, status, reopen and accept work the same in it; a flat run into it is refused (exit 2) and writes nothing', async () => {
    const out = await tempDir();
    await imported(['traffic', '--from', daysAgo(4), '--to', daysAgo(3), '--layout', 'hive', '-o', out]);
    const first = await imported(['traffic', '--catch-up', '--layout', 'hive', '-o', out]);
    expect(first.stderr).toContain(`-> ${join(out, `metric=traffic/dt=${daysAgo(2)}/traffic_${daysAgo(2)}.csv`)}`);
    const status = await runCli(['status', '-o', out, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ metrics: [{ key: 'traffic', lastCompleteDay: daysAgo(2), gapDays: 0 }] });

    expect((await runCli(['reopen', 'traffic', '--date', daysAgo(2), '-o', out])).code).toBe(0);
    // A temp file a killed run left in the day's folder is removed by the run that imports that day again.
    const stale = join(out, `metric=traffic/dt=${daysAgo(2)}/.traffic_${daysAgo(2)}.csv.${await deadPid()}.0123abcd.tmp`);
    await writeFile(stale, 'half');
    const again = await imported(['traffic', '--catch-up', '-o', out], { AREA_METRICS_LAYOUT: 'hive' });
    expect(again.stderr).toContain(`removed ${stale}, a temp file left by process`);
    expect(again.stderr).toMatch(
      new RegExp(`traffic ${daysAgo(2)}: .* -> .*metric=traffic/dt=${daysAgo(2)}/traffic_${daysAgo(2)}\\.csv \\(unchanged\\)`),
    );
    expect((await runCli(['accept', 'traffic', '--date', daysAgo(5), '-o', out])).code).toBe(0);
    const accepted = JSON.parse((await runCli(['status', '-o', out, '--json'])).stdout) as {
      metrics: { accepted: string[][]; pending: unknown[] }[];
    };
    // Yesterday is imported but not over: pending, as in a flat folder.
    expect(accepted.metrics[0]).toMatchObject({ accepted: [[daysAgo(5), daysAgo(5)]], pending: [{ day: daysAgo(1), reason: 'not-over' }] });

    const before = await dataFiles(out);
    const stateBefore = await readFile(join(out, STATE), 'utf8');
    const requests = sandbox.requests.length;
    const refused = await runCli(['traffic', '--date', daysAgo(4), '--layout', 'flat', '-o', out, ...api()]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^error: --layout flat does not match the state .*whose files are laid out in hive partitions \(--layout hive\).*use --layout hive/m,
    );
    expect(await dataFiles(out)).toEqual(before);
    expect(await readFile(join(out, STATE), 'utf8')).toBe(stateBefore);
    expect(sandbox.requests.length).toBe(requests);
  });

  it('a Hive Parquet folder needs neither flag again: a catch-up without -f or --layout writes Parquet there; -f csv is exit 2', async () => {
    const out = await tempDir();
    await imported(['traffic', '--from', daysAgo(4), '--to', daysAgo(3), '--layout', 'hive', '-f', 'parquet', '-o', out]);
    expect(JSON.parse(await readFile(join(out, STATE), 'utf8'))).toMatchObject({ layout: 'hive', format: 'parquet' });
    await imported(['all', '--catch-up', '--lookback', '1', '-o', out]);
    const files = await dataFiles(out);
    expect(files.filter((file) => !file.endsWith('.parquet'))).toEqual([]);
    expect(files).toContain(`metric=traffic/dt=${daysAgo(2)}/traffic_${daysAgo(2)}.parquet`);

    const stateBefore = await readFile(join(out, STATE), 'utf8');
    const requests = sandbox.requests.length;
    const byFlag = await runCli(['traffic', '--date', daysAgo(4), '-f', 'csv', '-o', out, ...api()]);
    expect(byFlag.code).toBe(2);
    expect(byFlag.stderr).toMatch(
      /^error: -f csv does not match the state .*whose files are Parquet \(-f parquet\).*leave -f out .*start a new folder: another -o folder and --state/m,
    );
    // Set in the environment (/etc/area-metrics/env), the fix is there: the refusal names the variable.
    const byEnv = await runCli(['traffic', '--date', daysAgo(4), '-o', out, ...api()], { env: { AREA_METRICS_FORMAT: 'csv' } });
    expect(byEnv.code).toBe(2);
    expect(byEnv.stderr).toMatch(
      /^error: AREA_METRICS_FORMAT=csv does not match the state .*whose files are Parquet \(-f parquet\).*unset AREA_METRICS_FORMAT \(or set it to parquet\)/m,
    );
    expect(await dataFiles(out)).toEqual(files);
    expect(await readFile(join(out, STATE), 'utf8')).toBe(stateBefore);
    expect(sandbox.requests.length).toBe(requests);
  });
});
