/**
 * `backtest` over what real imports wrote: the sandbox's honest days imported into a folder (flat CSV, hive NDJSON,
 * Parquet), and the backtest of that folder holds nothing; with `--inject` it holds every fault it put in, naming the
 * days and stores; its JSON has the documented shape; no data is exit 2 saying so.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAULT_NAMES } from '../../src/backtest/faults.js';
import { backtestJson } from '../helpers/backtest.js';
import { useStoppedSandbox } from '../helpers/sandbox-clock.js';
import { useSharedTempDirs, useTempDirs } from '../helpers/tmp.js';
import { importArgs } from '../helpers/vendor.js';

const { daysAgo, sandbox, runCli } = useStoppedSandbox({ stores: 20, zones: 3, days: 60, seed: 48 });
const tempDir = useTempDirs('backtest-');
const sharedDir = useSharedTempDirs('backtest-imported-');

/**
 * The nights imported: from `FIRST` days ago to the day before yesterday. Four weeks of history and then some: two
 * faults injected (nights 28 and 39), each judged against the history before it. The false-hold rate of honest data
 * over a year (at 2 and 20 stores, a quarter at 200) is test/backtest/sandbox-days.test.ts's.
 */
const NIGHTS = 45;
const FIRST = NIGHTS + 1;

/** Each layout and format's folder: every metric's honest nights imported in one run, once, read by every test. */
const folders = new Map<string, Promise<string>>();
function importedFolder(layout: 'flat' | 'hive', format: 'csv' | 'ndjson' | 'parquet'): Promise<string> {
  const key = `${layout} ${format}`;
  const known = folders.get(key);
  if (known !== undefined) return known;
  const imported = (async () => {
    const out = await sharedDir();
    const args = importArgs(sandbox, 'all', out, '--from', daysAgo(FIRST), '--to', daysAgo(2), '--layout', layout, '-f', format);
    const result = await runCli(args, { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    return out;
  })();
  folders.set(key, imported);
  return imported;
}

// Real imports and replays of a whole span: a minute on a busy shared machine, not the default half minute.
describe('backtest of a folder real imports wrote', { timeout: 240_000 }, () => {
  it.each([
    { layout: 'flat', format: 'csv' },
    { layout: 'hive', format: 'ndjson' },
    { layout: 'flat', format: 'parquet' },
  ] as const)(
    `$layout $format: ${NIGHTS} honest nights of 20 stores, nothing held; --inject dark: every fault held the night it came`,
    async ({ layout, format }) => {
      const out = await importedFolder(layout, format);
      const honest = await backtestJson(runCli, ['all', '-o', out]);
      expect(honest.metrics.map(({ metric }) => metric)).toEqual(['unique-users', 'avg-screen-time', 'traffic']);
      for (const metric of honest.metrics) {
        expect(Object.keys(metric).sort()).toEqual(['from', 'held', 'holdRate', 'metric', 'nights', 'stillHeld', 'storeDays', 'to']);
        expect(metric).toMatchObject({
          from: daysAgo(FIRST),
          to: daysAgo(2),
          nights: NIGHTS,
          storeDays: NIGHTS * 20,
          held: [],
          stillHeld: [],
        });
        expect(metric.holdRate).toEqual({ nights: 0, storeDays: 0 });
        expect(metric.injected).toBeUndefined();
      }
      const dark = await backtestJson(runCli, ['all', '-o', out, '--inject', 'dark']);
      for (const metric of dark.metrics) {
        expect(Object.keys(metric)).toEqual(expect.arrayContaining(['injected', 'caught']));
        expect(metric.injected?.map(({ day }) => day)).toEqual([28, 39].map((night) => daysAgo(FIRST - night)));
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
    const out = await importedFolder('flat', 'csv');
    // The last 40 of the nights imported: a fault on their nights 28 and 39.
    const from = daysAgo(41);
    const { stdout, code, stderr } = await runCli([
      'backtest',
      'traffic',
      '-o',
      out,
      '--inject',
      'half-day',
      '--from',
      from,
      '--to',
      daysAgo(2),
    ]);
    expect(code, stderr).toBe(0);
    // Off a terminal no progress bar: stderr stays empty, stdout the report's alone.
    expect(stderr).toBe('');
    expect(stdout).toMatch(
      new RegExp(
        `^traffic: 40 nights ${from}\\.\\.${daysAgo(2)}, 800 store-days; would hold 0 days \\(0% of nights, 0% of store-days\\)$`,
        'm',
      ),
    );
    expect(stdout).toMatch(
      /^ {2}injected every store at half \(a half day\) on 2 days: held 2 \(2 the night it came, 0 later\), missed 0$/m,
    );
  });

  it('no data there, or a metric unknown: exit 2 saying so', async () => {
    const empty = await tempDir();
    const none = await runCli(['backtest', 'all', '-o', empty]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no state file/);
    const out = await importedFolder('flat', 'csv');
    // Days before the first imported.
    const outside = await runCli(['backtest', 'all', '-o', out, '--from', daysAgo(FIRST + 20), '--to', daysAgo(FIRST + 10)]);
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
