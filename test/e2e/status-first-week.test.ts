/**
 * `status` in a new user's first week, the command line (run in this process) against a sandbox started in the test:
 * the first morning after the README's cron line is no alert, every gauge has a sample for every metric, pending days
 * read as ranges on one line per metric, an interrupted run's rows are recorded, and a textfile export without a state
 * says so.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/cli.js';
import { clockedCli, daysBefore } from '../helpers/sandbox-clock.js';
import { dataFiles, useTempDirs } from '../helpers/tmp.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const STATE = '.area-metrics-state.json';
const METRICS = ['avg-screen-time', 'traffic', 'unique-users'];
const TODAY = new Date().toISOString().slice(0, 10);
/** The README's nightly run, and its morning status check. */
const NIGHT = new Date(`${TODAY}T04:30:00Z`);
const MORNING = new Date(`${TODAY}T09:00:00Z`);
const night = clockedCli(NIGHT);
const morning = clockedCli(MORNING);

const daysAgo = daysBefore(NIGHT);

/** `2026-10-25..11-24` as status prints a range within one year. */
function shortRange(first: string, last: string): string {
  return `${first}..${first.slice(0, 4) === last.slice(0, 4) ? last.slice(5) : last}`;
}

const tempDir = useTempDirs('status-first-week-');
const sandbox = useSandbox({ now: () => NIGHT, port: 0, stores: 3, zones: 2, days: 12, clientId: 'week-client' });
const secretEnv = { env: SECRET_ENV };

/** The text table's row of a key, split into its cells. */
function rowOf(text: string, key: string): string[] {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${key} `));
  if (line === undefined) throw new Error(`no line for ${key} in:\n${text}`);
  return line.split(/\s{2,}/);
}

describe("the first morning after the README's cron line", () => {
  it('is not an alert: a metric first asked for yesterday is 1 day behind, and every gauge has a sample for it', async () => {
    const out = await tempDir();
    const nightly = await night.runCli(importArgs(sandbox, 'all', out, '--catch-up', '--lookback', '2'), secretEnv);
    expect(nightly.code, nightly.stderr).toBe(0);

    const check = await morning.runCli(['status', '-o', out, '--max-behind', '1']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toBe('');
    for (const metric of METRICS) expect(rowOf(check.stdout, metric).slice(0, 4)).toEqual([metric, daysAgo(1), 'none yet', '1']);

    const json = JSON.parse((await morning.runCli(['status', '-o', out, '--json'])).stdout) as {
      metrics: { key: string; daysBehind: number; behind: boolean }[];
    };
    expect(json.metrics.map(({ key, daysBehind }) => [key, daysBehind])).toEqual(METRICS.map((metric) => [metric, 1]));

    const prometheus = await morning.runCli(['status', '-o', out, '--format', 'prometheus']);
    expect(prometheus.code, prometheus.stderr).toBe(0);
    const lines = prometheus.stdout.trim().split('\n');
    expect(lines).toContain('area_metrics_state_readable 1');
    const gauges = lines
      .filter((line) => line.startsWith('# TYPE area_metrics_') && !line.includes('last_run') && !line.includes('state_readable'))
      .map((line) => line.split(' ')[2]!);
    expect(gauges).toContain('area_metrics_days_behind');
    for (const gauge of gauges) {
      const samples = lines.filter((line) => line.startsWith(`${gauge}{`));
      expect(
        samples.map((line) => /key="([^"]+)"/.exec(line)?.[1]),
        gauge,
      ).toEqual(METRICS);
    }
    for (const metric of METRICS) {
      expect(lines).toContain(`area_metrics_days_behind{metric="${metric}",key="${metric}"} 1`);
      expect(lines).toContain(`area_metrics_last_complete_day_timestamp_seconds{metric="${metric}",key="${metric}"} NaN`);
    }

    // Days later with still nothing complete, it is an alert, and says why.
    const later = clockedCli(new Date(MORNING.getTime() + 3 * 86_400_000));
    const late = await later.runCli(['status', '-o', out, '--max-behind', '1']);
    expect(late.code).toBe(8);
    expect(late.stderr).toContain('traffic (4 days behind, no complete day yet)');
  });
});

describe('an interrupted run', () => {
  it('records the rows it wrote, and its unfinished days read as one range per reason on one line per metric', async () => {
    const out = await tempDir();
    const [from, to] = [daysAgo(10), daysAgo(2)];
    sandbox.setFaults({ latencyMs: 80 });
    const run = night.startInProcess(importArgs(sandbox, 'all', out, '--from', from, '--to', to, '--concurrency', '1'), {
      ...secretEnv,
      timeoutMs: 60_000,
    });
    await waitUntil(() => (run.stderr().match(/ rows from /g) ?? []).length >= 3, 'three units written', 30_000);
    run.kill('SIGINT');
    expect((await run.done).code).toBe(130);
    sandbox.setFaults({});

    const files = await dataFiles(out);
    const written = await Promise.all(files.map(async (path) => (await readFile(join(out, path), 'utf8')).trim().split('\n').length - 1));
    const rows = written.reduce((sum, count) => sum + count, 0);
    expect(rows).toBeGreaterThan(0);
    const report = JSON.parse((await morning.runCli(['status', '-o', out, '--json'])).stdout) as {
      lastRun: { exitCode: number; rows: Record<string, number> };
    };
    expect(report.lastRun.exitCode).toBe(130);
    expect(Object.values(report.lastRun.rows).reduce((sum, count) => sum + count, 0)).toBe(rows);
    expect(report.lastRun.rows['unique-users']).toBeGreaterThan(0);

    const text = (await morning.runCli(['status', '-o', out])).stdout;
    expect(text).toMatch(/^last run: .* exit 130, rows: unique-users \d+/m);
    expect(text).not.toContain('rows: none');
    // Untouched metrics: every day of the run pending, one range, one line.
    for (const metric of ['avg-screen-time', 'traffic']) {
      expect(rowOf(text, metric)).toEqual([metric, from, 'none yet', '10', '-', '-', '-', '-', `${shortRange(from, to)} interrupted`]);
    }
    const done = files.filter((path) => path.startsWith('unique-users/')).length;
    expect(rowOf(text, 'unique-users')).toEqual([
      'unique-users',
      from,
      daysAgo(11 - done),
      expect.any(String),
      '3',
      '-',
      '-',
      '-',
      `${shortRange(daysAgo(10 - done), to)} interrupted`,
    ]);
  });
});

describe('pending and given-up days in the text', () => {
  it('read as ranges, consecutive days with the same reason together, one line per metric', async () => {
    const out = await tempDir();
    await mkdir(out, { recursive: true });
    const pending: Record<string, unknown> = {};
    for (let n = 40; n >= 10; n--) pending[daysAgo(n)] = { reason: 'interrupted' };
    for (let n = 9; n >= 7; n--) pending[daysAgo(n)] = { reason: 'partly-published', missingStores: 1, stores: 2 };
    pending[daysAgo(6)] = { reason: 'partly-published', missingStores: 2, stores: 1 };
    pending[daysAgo(1)] = { reason: 'not-over', stores: 3 };
    const state = {
      version: 5,
      metrics: {
        traffic: {
          complete: [
            [daysAgo(5), daysAgo(5)],
            [daysAgo(3), daysAgo(2)],
          ],
          givenUp: [
            [daysAgo(4), daysAgo(4)],
            [daysAgo(45), daysAgo(41)],
          ],
          pending,
        },
      },
      storeSets: {},
    };
    await writeFile(join(out, STATE), JSON.stringify(state));
    const result = await morning.runCli(['status', '-o', out]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(rowOf(result.stdout, 'traffic')).toEqual([
      'traffic',
      daysAgo(45),
      daysAgo(2),
      '1',
      '-',
      `${shortRange(daysAgo(45), daysAgo(6))}, ${daysAgo(4)}`,
      `${shortRange(daysAgo(45), daysAgo(41))}, ${daysAgo(4)}`,
      '-',
      `${shortRange(daysAgo(40), daysAgo(10))} interrupted, ${shortRange(daysAgo(9), daysAgo(7))} partly published (1 store missing), ` +
        `${daysAgo(6)} partly published (2 stores missing), ${daysAgo(1)} imported before it was over`,
    ]);
  });
});

describe('status --format prometheus without a state', () => {
  it('does not leave a silent empty file: a sample says there is no usable state, one line says why, exit 2', async () => {
    const out = await tempDir();
    const result = await morning.runCli(['status', '-o', out, '--format', 'prometheus']);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('\narea_metrics_state_readable 0\n');
    expect(result.stdout).toMatch(/^# HELP area_metrics_state_readable /);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/no state file at .*\.area-metrics-state\.json/)]);

    await writeFile(join(out, STATE), 'not json');
    const unusable = await morning.runCli(['status', '-o', out, '--format', 'prometheus']);
    expect(unusable.code).toBe(2);
    expect(unusable.stdout).toContain('area_metrics_state_readable 0');
    expect(unusable.stderr).toMatch(/is not valid JSON/);

    // The text and JSON formats print nothing on stdout, as before.
    expect((await morning.runCli(['status', '-o', join(out, 'none')])).stdout).toBe('');
  });
});
