/**
 * `backtest` of a bucket (s3rver) and of a PostgreSQL database (a throwaway cluster), each filled by a real import of
 * the sandbox's honest days: nothing held, and a dark store injected is held on the night it came, as in a folder.
 * The database holds every metric; the bucket traffic alone (the widest rows): reading it back is the same for each
 * metric, and an import into a bucket writes its state and coverage with each unit, ten requests a unit.
 */
import { describe, expect, it } from 'vitest';
import { backtestJson, type BacktestJson } from '../helpers/backtest.js';
import { usePostgres, warnIfPostgresMissing } from '../helpers/postgres.js';
import { useS3 } from '../helpers/s3.js';
import { useStoppedSandbox } from '../helpers/sandbox-clock.js';
import { importArgs } from '../helpers/vendor.js';

const { daysAgo, sandbox, runCli } = useStoppedSandbox({ stores: 10, zones: 3, days: 50, seed: 482 });
const skipPostgres = warnIfPostgresMissing('the PostgreSQL backtest');

/**
 * The nights imported, to the day before yesterday: four weeks of history and then some, so that two dark stores are
 * injected (nights 28 and 39).
 */
const NIGHTS = 40;
const FIRST = NIGHTS + 1;

/** The honest nights of `metric` imported into `output`, then its backtest honest and with a dark store injected. */
async function importedAndBacktested(
  metric: string,
  output: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<[BacktestJson, BacktestJson]> {
  const imported = await runCli(importArgs(sandbox, metric, output, '--from', daysAgo(FIRST), '--to', daysAgo(2)), {
    env,
    timeoutMs: 120_000,
  });
  expect(imported.code, imported.stderr).toBe(0);
  const backtest = (...inject: string[]) => backtestJson(runCli, [metric, '-o', output, ...inject], { env });
  return [await backtest(), await backtest('--inject', 'dark')];
}

function expectHonestAndCaught([honest, dark]: [BacktestJson, BacktestJson], metrics: readonly string[]): void {
  expect(honest.metrics.map(({ metric }) => metric)).toEqual(metrics);
  for (const metric of honest.metrics) expect(metric).toMatchObject({ nights: NIGHTS, storeDays: NIGHTS * 10, held: [] });
  expect(dark.metrics.map(({ metric }) => metric)).toEqual(metrics);
  for (const metric of dark.metrics) {
    expect(metric.injected?.map(({ day }) => day)).toEqual([28, 39].map((night) => daysAgo(FIRST - night)));
    expect(metric.caught?.map(({ day }) => day)).toEqual(metric.injected?.map(({ day }) => day));
  }
}

describe('backtest of a bucket', { timeout: 240_000 }, () => {
  const s3 = useS3();

  it('hive layout, NDJSON: nothing held; every dark store injected held', async () => {
    const runs = await importedAndBacktested(
      'traffic',
      `s3://${s3.bucket}/backtest`,
      s3.env({ AREA_METRICS_LAYOUT: 'hive', AREA_METRICS_FORMAT: 'ndjson' }),
    );
    expectHonestAndCaught(runs, ['traffic']);
  });
});

describe.skipIf(skipPostgres)('backtest of a PostgreSQL database', { timeout: 240_000 }, () => {
  const server = usePostgres();

  it.each(['utc', 'local'])('--days %s: nothing held; every dark store injected held', async (mode) => {
    const database = `backtest_${mode}`;
    await server.query(`CREATE DATABASE ${database}`);
    const runs = await importedAndBacktested('all', server.url({ database, params: { schema: 'area_metrics' } }), {
      AREA_METRICS_DAYS: mode,
    });
    expectHonestAndCaught(runs, ['unique-users', 'avg-screen-time', 'traffic']);
  });
});
