/**
 * `backtest` over what real imports wrote: the built binary imports the sandbox's honest days into a folder (flat
 * CSV, hive NDJSON, Parquet), and the backtest of that folder holds nothing; with `--inject` it holds every fault it
 * put in, naming the days and stores; its JSON has the documented shape; no data is exit 2 saying so.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAULT_NAMES } from '../../src/backtest/faults.js';
import { assertBuilt } from '../helpers/cli.js';
import { clockedCli, daysBefore, noonToday, useSandbox } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';

const SECRET = 'Backtest-S3cret-7c1d';
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
const { runCli } = clockedCli(CLOCK, { AREA_METRICS_CLIENT_SECRET: SECRET });
const sandbox = useSandbox({ port: 0, stores: 20, zones: 3, days: 90, seed: 48, clientSecret: SECRET, now: () => CLOCK });
const tempDir = useTempDirs('backtest-');

interface BacktestJson {
  metrics: {
    metric: string;
    from: string;
    to: string;
    nights: number;
    storeDays: number;
    held: { day: string; nightsLate: number; storeCount: number; stores: string[]; why: string; injected: boolean }[];
    stillHeld: string[];
    holdRate: { nights: number; storeDays: number };
    injected?: { day: string; fault: string; store: string | null }[];
    caught?: { day: string; fault: string; store: string | null; nightsLate: number }[];
  }[];
}

/** Every metric's 80 honest days imported into a fresh folder by the built binary, in one run. */
async function importedFolder(args: readonly string[]): Promise<string> {
  const out = await tempDir();
  const imported = await runCli(
    ['all', '--base-url', sandbox().url, '--client-id', sandbox().clientId, '-o', out, '--from', daysAgo(81), '--to', daysAgo(2), ...args],
    { process: true, timeoutMs: 120_000 },
  );
  expect(imported.code, imported.stderr).toBe(0);
  return out;
}

async function backtest(args: readonly string[]): Promise<BacktestJson> {
  const result = await runCli(['backtest', ...args, '--json'], { timeoutMs: 60_000 });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as BacktestJson;
}

// Real imports and replays of a whole span: minutes on a busy shared machine, not the default half minute.
describe('backtest of a folder real imports wrote', { timeout: 240_000 }, () => {
  it.each([
    { layout: 'flat', format: 'csv' },
    { layout: 'hive', format: 'ndjson' },
    { layout: 'flat', format: 'parquet' },
  ])(
    '$layout $format: 80 honest nights of 20 stores, nothing held; --inject dark: every fault held the night it came',
    async ({ layout, format }) => {
      assertBuilt();
      const out = await importedFolder(['--layout', layout, '-f', format]);
      const honest = await backtest(['all', '-o', out]);
      expect(honest.metrics.map(({ metric }) => metric)).toEqual(['unique-users', 'avg-screen-time', 'traffic']);
      for (const metric of honest.metrics) {
        expect(Object.keys(metric).sort()).toEqual(['from', 'held', 'holdRate', 'metric', 'nights', 'stillHeld', 'storeDays', 'to']);
        expect(metric).toMatchObject({ from: daysAgo(81), to: daysAgo(2), nights: 80, storeDays: 80 * 20, held: [], stillHeld: [] });
        expect(metric.holdRate).toEqual({ nights: 0, storeDays: 0 });
        expect(metric.injected).toBeUndefined();
      }
      const dark = await backtest(['all', '-o', out, '--inject', 'dark']);
      for (const metric of dark.metrics) {
        expect(Object.keys(metric)).toEqual(expect.arrayContaining(['injected', 'caught']));
        // Every 11th day after 4 weeks: days 28, 39, 50, 61, 72 of 80.
        expect(metric.injected?.map(({ day }) => day)).toEqual([28, 39, 50, 61, 72].map((index) => daysAgo(81 - index)));
        expect(metric.caught).toEqual(metric.injected?.map((fault) => ({ ...fault, nightsLate: 0 })));
        expect(metric.held.map(({ day, stores, injected }) => ({ day, stores, injected }))).toEqual(
          metric.injected?.map(({ day, store }) => ({ day, stores: [store], injected: true })),
        );
        // Injected faults are not false holds.
        expect(metric.holdRate).toEqual({ nights: 0, storeDays: 0 });
      }
    },
  );

  it('text: a line per metric with its rates, and what each fault found; --from/--to bound the nights', async () => {
    const out = await importedFolder([]);
    const { stdout, code, stderr } = await runCli([
      'backtest',
      'traffic',
      '-o',
      out,
      '--inject',
      'half-day',
      '--from',
      daysAgo(61),
      '--to',
      daysAgo(2),
    ]);
    expect(code, stderr).toBe(0);
    // Off a terminal no progress bar: stderr stays empty, stdout the report's alone.
    expect(stderr).toBe('');
    expect(stdout).toMatch(
      new RegExp(
        `^traffic: 60 nights ${daysAgo(61)}\\.\\.${daysAgo(2)}, 1200 store-days; would hold 0 days \\(0% of nights, 0% of store-days\\)$`,
        'm',
      ),
    );
    expect(stdout).toMatch(
      /^ {2}injected every store at half \(a half day\) on 3 days: held 3 \(3 the night it came, 0 later\), missed 0$/m,
    );
  });

  it('no data there, or a metric unknown: exit 2 saying so', async () => {
    const empty = await tempDir();
    const none = await runCli(['backtest', 'all', '-o', empty]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no state file/);
    const out = await importedFolder(['--from', daysAgo(3), '--to', daysAgo(2)]);
    const outside = await runCli(['backtest', 'all', '-o', out, '--from', daysAgo(60), '--to', daysAgo(50)]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/no data to backtest in .* between --from and --to/);
    expect((await runCli(['backtest', 'visits', '-o', out])).code).toBe(2);
    const stream = await runCli(['backtest', 'all', '-o', '-', '--state', join(out, '.area-metrics-state.json')]);
    expect(stream.code).toBe(2);
    expect(stream.stderr).toMatch(/stdout keeps nothing to read back/);
  });

  it('--inject takes the faults the help names', async () => {
    const { stdout } = await runCli(['backtest', '--help']);
    for (const fault of FAULT_NAMES) expect(stdout).toContain(fault);
    expect(stdout).toMatch(/Examples:/);
  });
});
