/**
 * Days as stores live them: no day is final before every local day it holds has ended (both modes), and
 * `--days local` writes a file per store-local day. The BUILT binary against a faithful sandbox with stores from
 * -11:00 to +13:00, the binary and the sandbox on one clock the test drives.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { latestUnit } from '../helpers/manifests.js';
import { dataFiles, readTree, useTempDirs } from '../helpers/tmp.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const STATE = '.area-metrics-state.json';
/** 14 stores span -11:00 to +13:00. */
const STORES = 14;

/** The one clock of the sandbox and of every run. */
let clock = new Date('2026-11-23T18:28:00Z');
const tempDir = useTempDirs('local-days-');

const sandbox = useSandbox({ port: 0, stores: STORES, zones: 2, days: 10, clientId: 'local-days', now: () => clock });

function run(args: readonly string[], at: Date): Promise<CliResult> {
  clock = at;
  return runCli([...args, '--base-url', sandbox.url, '--client-id', sandbox.clientId], {
    env: { AREA_METRICS_NOW: at.toISOString(), ...SECRET_ENV },
  });
}

interface State {
  days?: string;
  metrics: Record<string, { complete?: [string, string][]; pending?: Record<string, { reason: string; stores?: number }> }>;
}

async function readState(out: string): Promise<State> {
  return JSON.parse(await readFile(join(out, STATE), 'utf8')) as State;
}

function warnings(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('warn: '));
}

/** A CSV file's data lines (its header left out). */
async function csvRows(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8')).split('\n').slice(1).filter(Boolean);
}

const DAY_COLUMN = 2;

describe('a day is over only when its local days are', () => {
  it('at 18:28 UTC on D+1, all --catch-up writes D but records it pending, not over, with one warning for all metrics', async () => {
    const out = await tempDir();
    const result = await run(['all', '--catch-up', '-o', out], new Date('2026-11-23T18:28:00Z'));
    expect(result.code).toBe(0);
    const state = await readState(out);
    for (const metric of METRIC_NAMES) {
      expect(state.metrics[metric]?.complete).toBeUndefined();
      expect(state.metrics[metric]?.pending?.['2026-11-22']?.reason).toBe('not-over');
    }
    // In the UTC window of 11-22, the stores at +01:00, +02:00 and +05:30 are still in their local day 11-23 at 18:28Z
    // and not served; the day is not over until the last local day it can hold has ended. One line says so for all.
    expect(warnings(result.stderr).filter((line) => line.includes('not over'))).toEqual([
      "warn: unique-users, avg-screen-time, traffic 2026-11-22: not over until 2026-11-24T00:59:59Z, when the last store's local day in it ends; " +
        'written with the figures so far, which may still change, and left pending: the next --catch-up imports it again',
    ]);
    const traffic = await csvRows(join(out, 'traffic', '2026-11-22.csv'));
    expect(traffic.length).toBeGreaterThan(0);
  });

  it('the next --catch-up after the day is over records it complete', async () => {
    const out = await tempDir();
    expect((await run(['traffic', '--catch-up', '-o', out], new Date('2026-11-23T18:28:00Z'))).code).toBe(0);
    const later = await run(['traffic', '--catch-up', '-o', out], new Date('2026-11-24T01:00:00Z'));
    expect(later.code).toBe(0);
    const state = await readState(out);
    expect(state.metrics.traffic?.complete).toEqual([['2026-11-22', '2026-11-22']]);
    // Yesterday (2026-11-23) is asked too, and is not over either.
    expect(state.metrics.traffic?.pending?.['2026-11-23']?.reason).toBe('not-over');
  });

  it('the manifest says a not-over file is provisional, and the night it becomes final without new bytes says so', async () => {
    const out = await tempDir();
    // Every store's part of 11-22 is served by 00:30Z on 11-24, but the day is not over until 00:59:59Z.
    expect((await run(['traffic', '--date', '2026-11-22', '-o', out], new Date('2026-11-24T00:30:00Z'))).code).toBe(0);
    expect(await latestUnit(out, 'traffic', '2026-11-22')).toMatchObject({ status: 'provisional', reason: 'not-over', changed: true });
    expect((await run(['traffic', '--catch-up', '-o', out], new Date('2026-11-24T01:00:00Z'))).code).toBe(0);
    const unit = await latestUnit(out, 'traffic', '2026-11-22');
    expect(unit).toMatchObject({ status: 'final', finalized: true, changed: false });
    expect(unit).not.toHaveProperty('reason');
    // A day final before the run (a look-back) is final, not finalized again.
    expect((await run(['traffic', '--catch-up', '--lookback', '1', '-o', out], new Date('2026-11-24T01:00:00Z'))).code).toBe(0);
    expect(await latestUnit(out, 'traffic', '2026-11-22')).toEqual(expect.not.objectContaining({ finalized: true }));
    expect(await latestUnit(out, 'traffic', '2026-11-22')).toMatchObject({ status: 'final', changed: false });
  });
});

describe('--days local', () => {
  it('a local day holds exactly the rows of the UTC imports whose day is that day, every store once', async () => {
    const at = new Date('2026-11-26T12:00:00Z');
    const utc = await tempDir();
    const local = await tempDir();
    expect((await run(['traffic', '--from', '2026-11-21', '--to', '2026-11-23', '-o', utc], at)).code).toBe(0);
    const result = await run(['traffic', '--days', 'local', '--date', '2026-11-22', '-o', local], at);
    expect(result.code).toBe(0);
    expect(await dataFiles(local)).toEqual(['traffic/2026-11-22.csv']);

    const utcRows: string[] = [];
    for (const day of ['2026-11-21', '2026-11-22', '2026-11-23']) utcRows.push(...(await csvRows(join(utc, 'traffic', `${day}.csv`))));
    const expected = utcRows.filter((row) => row.split(',')[DAY_COLUMN] === '2026-11-22').sort();
    const localRows = (await csvRows(join(local, 'traffic', '2026-11-22.csv'))).sort();
    expect(localRows).toEqual(expected);
    expect(new Set(localRows.map((row) => row.split(',')[DAY_COLUMN]))).toEqual(new Set(['2026-11-22']));
    expect(new Set(localRows.map((row) => row.split(',')[0])).size).toBe(STORES);
    // One window for the local day: from its midnight at +14:00 to its midnight at -12:00.
    const request = sandbox.requests.at(-1);
    expect(request?.query).toMatchObject({ datetime_gte: '2026-11-21T10:00:00Z', datetime_lte: '2026-11-22T12:00:00Z' });
    expect((await readState(local)).days).toBe('local');
    expect((await readState(local)).metrics.traffic?.complete).toEqual([['2026-11-22', '2026-11-22']]);
  });

  it('a local day is never recorded complete before its last store (-11:00) has ended its day', async () => {
    const out = await tempDir();
    const args = ['unique-users', '--days', 'local', '--date', '2026-11-22', '-o', out];
    // 10:00Z: the -11:00 store is still in its day 2026-11-22 (it ends at 11:00Z), so it is not served yet.
    const early = await run(args, new Date('2026-11-23T10:00:00Z'));
    expect(early.code).toBe(0);
    expect((await readState(out)).metrics['unique-users']?.pending?.['2026-11-22']).toEqual({ reason: 'not-over', stores: STORES - 1 });
    // 12:30Z: every store's day has ended and is served, but a day that changes to or from daylight saving time could
    // still run: not over until 25 h after the last local midnight.
    const served = await run(args, new Date('2026-11-23T12:30:00Z'));
    expect(served.code).toBe(0);
    expect((await readState(out)).metrics['unique-users']?.pending?.['2026-11-22']).toEqual({ reason: 'not-over', stores: STORES });
    expect(warnings(served.stderr).join('\n')).toContain('unique-users 2026-11-22: not over until 2026-11-23T13:00:00Z');
    const over = await run(args, new Date('2026-11-23T13:00:00Z'));
    expect(over.code).toBe(0);
    const state = await readState(out);
    expect(state.metrics['unique-users']?.complete).toEqual([['2026-11-22', '2026-11-22']]);
    expect(state.metrics['unique-users']?.pending).toBeUndefined();
  });

  it('--catch-up with --store: a file per store of the latest local day over everywhere, only that day, complete', async () => {
    const out = await tempDir();
    const result = await run(
      ['traffic', '--days', 'local', '--catch-up', '--store', 'S001', '--store', 'S014', '-o', out],
      new Date('2026-11-26T12:00:00Z'),
    );
    expect(result.code, result.stderr).toBe(0);
    // At 12:00Z on the 26th, local day 2026-11-25 is over only at 13:00Z: 2026-11-24 is the latest over everywhere.
    expect(await dataFiles(out)).toEqual(['traffic/2026-11-24.store-S001.csv', 'traffic/2026-11-24.store-S014.csv']);
    for (const store of ['S001', 'S014']) {
      const rows = await csvRows(join(out, 'traffic', `2026-11-24.store-${store}.csv`));
      expect(new Set(rows.map((row) => `${row.split(',')[0]} ${row.split(',')[DAY_COLUMN]}`))).toEqual(new Set([`${store} 2026-11-24`]));
    }
    expect((await readState(out)).metrics['traffic[store=S001,S014]']?.complete).toEqual([['2026-11-24', '2026-11-24']]);
  });

  it('with no window imports the latest local day over everywhere', async () => {
    const out = await tempDir();
    const result = await run(['avg-screen-time', '--days', 'local', '-o', out], new Date('2026-11-23T12:59:00Z'));
    expect(result.code).toBe(0);
    expect(await dataFiles(out)).toEqual(['avg-screen-time/2026-11-21.csv']);
  });

  it('a local day whose window has not started is refused before any request', async () => {
    const out = await tempDir();
    const before = sandbox.requests.length;
    const result = await run(['traffic', '--days', 'local', '--date', '2026-11-24', '-o', out], new Date('2026-11-23T09:00:00Z'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--date 2026-11-24 is in the future (its window starts at 2026-11-23T10:00:00Z)');
    expect(sandbox.requests.length).toBe(before);
  });
});

describe('one folder, one day mode', () => {
  it.each([
    { first: 'utc', second: 'local' },
    { first: 'local', second: 'utc' },
  ])(
    'a --days $second run into a --days $first folder is exit 2 naming both, before any request, nothing written',
    async ({ first, second }) => {
      const at = new Date('2026-11-26T12:00:00Z');
      const out = await tempDir();
      expect((await run(['traffic', '--days', first, '--date', '2026-11-22', '-o', out], at)).code).toBe(0);
      const before = await readTree(out);
      const requests = sandbox.requests.length;
      const mixed = await run(['all', '--days', second, '--date', '2026-11-23', '-o', out], at);
      expect(mixed.code).toBe(2);
      expect(mixed.stderr).toMatch(new RegExp(`--days ${second} does not match the state .*--days ${first}\\)`));
      expect(sandbox.requests.length).toBe(requests);
      expect(await readTree(out)).toEqual(before);
    },
  );

  it('the same with --state naming the state of the other mode', async () => {
    const at = new Date('2026-11-26T12:00:00Z');
    const first = await tempDir();
    const second = await tempDir();
    expect((await run(['traffic', '--days', 'local', '--date', '2026-11-22', '-o', first], at)).code).toBe(0);
    const state = await readFile(join(first, STATE), 'utf8');
    const mixed = await run(['traffic', '--days', 'utc', '--date', '2026-11-22', '-o', second, '--state', join(first, STATE)], at);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('--days utc does not match the state');
    expect(await readFile(join(first, STATE), 'utf8')).toBe(state);
    expect(await dataFiles(second)).toEqual([]);
    // Without --days, the run takes the state's mode (a UTC run would be refused as above).
    const kept = await run(['traffic', '--date', '2026-11-22', '-o', second, '--state', join(first, STATE)], at);
    expect(kept.code, kept.stderr).toBe(0);
  });

  it('status reports the mode and counts behind from the latest local day over everywhere', async () => {
    const at = new Date('2026-11-26T12:00:00Z');
    const out = await tempDir();
    expect((await run(['traffic', '--days', 'local', '--date', '2026-11-22', '-o', out], at)).code).toBe(0);
    const status = await runCli(['status', '-o', out, '--json'], { env: { AREA_METRICS_NOW: at.toISOString() } });
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as { days: string; latestDayOver: string; metrics: { key: string; daysBehind: number }[] };
    expect(report.days).toBe('local');
    // At 12:00Z on 11-26, local day 11-25 is over only at 11-26T13:00Z: 11-24 is the latest over everywhere.
    expect(report.latestDayOver).toBe('2026-11-24');
    expect(report.metrics.find((metric) => metric.key === 'traffic')?.daysBehind).toBe(2);
  });
});
