/**
 * `backtest` of a bucket (s3rver) and of a PostgreSQL database (a throwaway cluster), each filled by a real import of
 * the sandbox's honest days: nothing held, and a dark store injected is held on the night it came, as in a folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, warnIfPostgresMissing, type TestPostgres } from '../helpers/postgres.js';
import { startS3, type S3Harness } from '../helpers/s3.js';
import { clockedCli, daysBefore, noonToday, useSandbox } from '../helpers/sandbox-clock.js';

const SECRET = 'Backtest-Stores-S3cret-9f0a';
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
const { runCli } = clockedCli(CLOCK, { AREA_METRICS_CLIENT_SECRET: SECRET });
const sandbox = useSandbox({ port: 0, stores: 10, zones: 3, days: 60, seed: 482, clientSecret: SECRET, now: () => CLOCK });
const skipPostgres = warnIfPostgresMissing('the PostgreSQL backtest');

interface Backtested {
  metrics: {
    metric: string;
    nights: number;
    storeDays: number;
    held: unknown[];
    injected?: { day: string }[];
    caught?: { day: string }[];
  }[];
}

/** 50 honest days imported into `output`, then its backtest honest and with a dark store injected. */
async function importedAndBacktested(
  output: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<[Backtested, Backtested]> {
  const imported = await runCli(
    ['all', '--base-url', sandbox().url, '--client-id', sandbox().clientId, '-o', output, '--from', daysAgo(51), '--to', daysAgo(2)],
    { env, timeoutMs: 120_000 },
  );
  expect(imported.code, imported.stderr).toBe(0);
  const runs = [];
  for (const inject of [[], ['--inject', 'dark']]) {
    const result = await runCli(['backtest', 'all', '-o', output, '--json', ...inject], { env, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    runs.push(JSON.parse(result.stdout) as Backtested);
  }
  return runs as [Backtested, Backtested];
}

function expectHonestAndCaught([honest, dark]: [Backtested, Backtested]): void {
  for (const metric of honest.metrics) expect(metric).toMatchObject({ nights: 50, storeDays: 500, held: [] });
  for (const metric of dark.metrics) {
    // Days 28 and 39 of 50.
    expect(metric.injected?.map(({ day }) => day)).toEqual([daysAgo(51 - 28), daysAgo(51 - 39)]);
    expect(metric.caught?.map(({ day }) => day)).toEqual(metric.injected?.map(({ day }) => day));
  }
}

describe('backtest of a bucket', { timeout: 240_000 }, () => {
  let s3: S3Harness;
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(async () => {
    await s3?.close();
  });

  it('hive layout, NDJSON: nothing held; every dark store injected held', async () => {
    const runs = await importedAndBacktested(
      `s3://${s3.bucket}/backtest`,
      s3.env({ AREA_METRICS_LAYOUT: 'hive', AREA_METRICS_FORMAT: 'ndjson' }),
    );
    expectHonestAndCaught(runs);
  });
});

describe.skipIf(skipPostgres)('backtest of a PostgreSQL database', { timeout: 240_000 }, () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(['utc', 'local'])('--days %s: nothing held; every dark store injected held', async (mode) => {
    const database = `backtest_${mode}`;
    await server.query(`CREATE DATABASE ${database}`);
    const runs = await importedAndBacktested(server.url({ database, params: { schema: 'area_metrics' } }), { AREA_METRICS_DAYS: mode });
    expectHonestAndCaught(runs);
  });
});
