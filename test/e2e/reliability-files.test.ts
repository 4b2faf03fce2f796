/**
 * What lands on disk: completeness, atomic and idempotent files, interrupts, partial failure in a backfill,
 * and `--catch-up` with its state file; the BUILT binary against a sandbox started in the test.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { waitUntil } from '../helpers/cli.js';
import { dataFiles, listFiles, readTree, useTempDirs } from '../helpers/tmp.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const STATE = '.area-metrics-state.json';

/** UTC day `n` days before today. */
/** One clock for the sandbox and every run: at noon (UTC) the day before yesterday is over and yesterday is not. */
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
const { runCli, startCli, startInProcess } = clockedCli(CLOCK, SECRET_ENV);

const tempDir = useTempDirs('reliability-files-');

function metricRequestsSince(before: number): { path: string; query: Record<string, string>; status: number }[] {
  return sandbox.requests.slice(before).filter((request) => request.path.startsWith('/api/bi/area-metrics/'));
}

interface StateV4 {
  version: number;
  metrics: Record<string, { complete?: [string, string][]; pending?: Record<string, { reason: string }> }>;
}

async function readState(out: string): Promise<StateV4> {
  const state = JSON.parse(await readFile(join(out, STATE), 'utf8')) as StateV4;
  expect(state.version).toBe(5);
  return state;
}

/** The latest complete day per state key. */
async function lastCompleteDays(out: string): Promise<Record<string, string | undefined>> {
  const state = await readState(out);
  return Object.fromEntries(Object.entries(state.metrics).map(([key, entry]) => [key, entry.complete?.at(-1)?.[1]]));
}

/** A key's pending days and their reasons. */
async function pendingDays(out: string, key: string): Promise<Record<string, string>> {
  const pending = (await readState(out)).metrics[key]?.pending ?? {};
  return Object.fromEntries(Object.entries(pending).map(([day, status]) => [day, status.reason]));
}

const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 3, zones: 3, days: 10, clientId: 'files-client' });

describe('completeness', () => {
  it('results that repeat across pages: the unit is fetched 3 times in all, then exit 6 naming unit, expected and received', async () => {
    const out = await tempDir();
    const day = daysAgo(2);
    const before = sandbox.requests.length;
    sandbox.setFaults({ repeatResult: true });
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--date', day, '--page-size', '2'));
    expect(result.code).toBe(6);
    // 3 stores at 2 per page: 2 pages per fetch, 3 fetches.
    const pages = metricRequestsSince(before).map((request) => request.query.page ?? '1');
    expect(pages).toEqual(['1', '2', '1', '2', '1', '2']);
    expect(result.stderr).toMatch(/fetching the unit again \(2\/3\)/);
    expect(result.stderr).toMatch(/fetching the unit again \(3\/3\)/);
    const line = result.stderr.split('\n').find((text) => text.includes('incomplete')) ?? '';
    expect(line).toContain(`traffic ${day}`);
    expect(line).toMatch(/expected 3 results, received 3, 1 repeated/);
    expect(await dataFiles(out)).toEqual([]);
  });

  it('a repeat that goes away on a refetch: exit 0 and the same file as a clean run', async () => {
    const clean = await tempDir();
    const day = daysAgo(2);
    expect((await runCli(importArgs(sandbox, 'traffic', clean, '--date', day, '--page-size', '2'))).code).toBe(0);
    // Unstable ordering for the first fetch only: switched off as soon as the client says it fetches again.
    const out = await tempDir();
    sandbox.setFaults({ repeatResult: true, latencyMs: 300 });
    const run = startInProcess(importArgs(sandbox, 'traffic', out, '--date', day, '--page-size', '2'));
    await waitUntil(() => run.stderr().includes('fetching the unit again'), 'the first refetch');
    sandbox.setFaults({});
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(join(out, 'traffic', `${day}.csv`))).toEqual(await readFile(join(clean, 'traffic', `${day}.csv`)));
  });
});

describe('atomic and idempotent files', () => {
  it('re-running the same window gives byte-identical files, whatever the page size and concurrency', async () => {
    const out = await tempDir();
    const args = importArgs(sandbox, 'all', out, '--from', daysAgo(3), '--to', daysAgo(1));
    const first = await runCli([...args, '--page-size', '2', '--concurrency', '1']);
    expect(first.code, first.stderr).toBe(0);
    const firstTree = await readTree(out);
    expect([...firstTree.keys()].filter((path) => !path.startsWith('.'))).toHaveLength(9);
    const second = await runCli([...args, '--concurrency', '8']);
    expect(second.code, second.stderr).toBe(0);
    expect(await readTree(out)).toEqual(firstTree);
    const ndjson = await tempDir();
    expect((await runCli(importArgs(sandbox, 'all', ndjson, '--from', daysAgo(3), '--to', daysAgo(1), '-f', 'ndjson'))).code).toBe(0);
    const again = await readTree(ndjson);
    expect(
      (await runCli(importArgs(sandbox, 'all', ndjson, '--from', daysAgo(3), '--to', daysAgo(1), '-f', 'ndjson', '--page-size', '1'))).code,
    ).toBe(0);
    expect(await readTree(ndjson)).toEqual(again);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s mid-run: exit %i, complete units intact, no partial or temp file', async (signal, code) => {
    const days = [6, 5, 4, 3, 2, 1].map(daysAgo);
    const reference = await tempDir();
    const clean = await runCli(importArgs(sandbox, 'unique-users', reference, '--from', days[0]!, '--to', days.at(-1)!));
    expect(clean.code, clean.stderr).toBe(0);
    const referenceTree = await readTree(reference);

    const out = await tempDir();
    // Slow enough (2 pages of 250 ms per unit, one unit at a time) that the signal lands mid-run.
    sandbox.setFaults({ latencyMs: 250 });
    const run = startCli(
      importArgs(sandbox, 'unique-users', out, '--from', days[0]!, '--to', days.at(-1)!, '--page-size', '2', '--concurrency', '1'),
    );
    await waitUntil(async () => (await listFiles(out)).includes(`unique-users/${days[0]}.csv`), 'the first file');
    run.kill(signal);
    const result = await run.done;
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(`interrupted by ${signal}`);

    const files = await listFiles(out);
    expect(files.filter((path) => path.endsWith('.tmp'))).toEqual([]);
    expect(files).toContain(`unique-users/${days[0]}.csv`);
    expect(files.length).toBeLessThan(days.length + 1);
    // Whatever is there is complete: every data file equals the clean run's.
    const tree = await readTree(out);
    for (const [path, bytes] of tree) {
      if (path === STATE) continue;
      expect(bytes, path).toEqual(referenceTree.get(path));
    }
    // The state names a day whose file is there, so --catch-up resumes right after it.
    const last = (await lastCompleteDays(out))['unique-users'];
    expect(files).toContain(`unique-users/${last}.csv`);
  });
});

describe('partial failure in a backfill', () => {
  const days = [5, 4, 3, 2, 1].map(daysAgo);

  it('one day of five fails with a final status: the other four are written, the day is named, exit is its code', async () => {
    const out = await tempDir();
    // One request per unit, one unit at a time: request 3 is the third day.
    sandbox.setFaults({ failNth: { n: 3, status: 404 } });
    const result = await runCli(
      importArgs(sandbox, 'avg-screen-time', out, '--from', days[0]!, '--to', days[4]!, '--concurrency', '1', '--retries', '1'),
    );
    expect(result.code).toBe(4);
    expect(await listFiles(out)).toEqual([STATE, ...[0, 1, 3, 4].map((index) => `avg-screen-time/${days[index]}.csv`)]);
    const line = result.stderr.split('\n').find((text) => text.startsWith('error:') && text.includes('HTTP 404')) ?? '';
    expect(line).toContain(`avg-screen-time ${days[2]}`);
    expect(result.stderr).toMatch(new RegExp(`imported 4 of 5 units.*1 failed, first: avg-screen-time ${days[2]}`));
    // The failed day is pending, so --catch-up will try it again; the days after it are complete all the same, but
    // yesterday, which is not over.
    expect(await lastCompleteDays(out)).toEqual({ 'avg-screen-time': days[3] });
    expect(await pendingDays(out, 'avg-screen-time')).toEqual({ [days[2]!]: 'failed', [days[4]!]: 'not-over' });
  });

  it("with two failed days the exit code is the earlier one's, in either order", async () => {
    // Day 2 a malformed body (5), day 4 a 503 (4), and the other way round.
    const outA = await tempDir();
    sandbox.setFaults({ truncateNth: { n: 2 }, failNth: { n: 4, status: 503 } });
    const a = await runCli(
      importArgs(sandbox, 'traffic', outA, '--from', days[0]!, '--to', days[4]!, '--concurrency', '1', '--retries', '0'),
    );
    expect(a.code).toBe(5);
    expect((await listFiles(outA)).filter((path) => path.startsWith('traffic/'))).toHaveLength(3);

    const outB = await tempDir();
    sandbox.setFaults({ failNth: { n: 2, status: 503 }, truncateNth: { n: 4 } });
    const b = await runCli(
      importArgs(sandbox, 'traffic', outB, '--from', days[0]!, '--to', days[4]!, '--concurrency', '1', '--retries', '0'),
    );
    expect(b.code).toBe(4);
    expect((await listFiles(outB)).filter((path) => path.startsWith('traffic/'))).toHaveLength(3);
  });

  it('a rejected credential ends the run there: the days after it are not attempted, exit 3', async () => {
    const out = await tempDir();
    sandbox.setFaults({ failNth: { n: 2, status: 401 }, truncateNth: { n: 4 } });
    const before = sandbox.requests.length;
    const result = await runCli(
      importArgs(sandbox, 'traffic', out, '--from', days[0]!, '--to', days[4]!, '--concurrency', '1', '--retries', '0'),
    );
    expect(result.code).toBe(3);
    expect(metricRequestsSince(before)).toHaveLength(2);
    expect(await dataFiles(out)).toEqual([`traffic/${days[0]}.csv`]);
    expect(await pendingDays(out, 'traffic')).toEqual(
      Object.fromEntries(days.slice(1).map((day) => [day, day === days[1] ? 'failed' : 'interrupted'])),
    );
  });
});

describe('--catch-up', () => {
  it('state says 5 days ago: exactly the 4 days since are imported, the state moves to the last day over', async () => {
    const out = await tempDir();
    await mkdir(out, { recursive: true });
    await writeFile(join(out, STATE), JSON.stringify({ version: 1, lastCompleteDay: { traffic: daysAgo(5) } }));
    const before = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(result.code, result.stderr).toBe(0);
    const expected = [4, 3, 2, 1].map(daysAgo);
    expect(await listFiles(out)).toEqual([STATE, ...expected.map((day) => `traffic/${day}.csv`)]);
    expect(
      metricRequestsSince(before)
        .map((request) => request.query.datetime_gte)
        .sort(),
    ).toEqual(expected.map((day) => `${day}T00:00:00Z`));
    expect(await lastCompleteDays(out)).toEqual({ traffic: daysAgo(2) });
    expect(await pendingDays(out, 'traffic')).toEqual({ [daysAgo(1)]: 'not-over' });

    // Only yesterday is left, pending until it is over: the next run asks for it alone and still exits 0.
    const idle = sandbox.requests.length;
    const again = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(again.code, again.stderr).toBe(0);
    expect(metricRequestsSince(idle).map((request) => request.query.datetime_gte)).toEqual([`${daysAgo(1)}T00:00:00Z`]);
  });

  it('a first run without state imports yesterday only', async () => {
    const out = await tempDir();
    const result = await runCli(importArgs(sandbox, 'all', out, '--catch-up'));
    expect(result.code, result.stderr).toBe(0);
    const yesterday = daysAgo(1);
    expect(await listFiles(out)).toEqual([
      STATE,
      `avg-screen-time/${yesterday}.csv`,
      `traffic/${yesterday}.csv`,
      `unique-users/${yesterday}.csv`,
    ]);
    // Yesterday is not over: written, and pending until the run after it is.
    expect(await lastCompleteDays(out)).toEqual({ 'unique-users': undefined, 'avg-screen-time': undefined, traffic: undefined });
    for (const metric of METRIC_NAMES) expect(await pendingDays(out, metric)).toEqual({ [yesterday]: 'not-over' });
  });

  it('--max-days bounds a long catch-up, oldest days first; the next run continues', async () => {
    const out = await tempDir();
    await mkdir(out, { recursive: true });
    await writeFile(join(out, STATE), JSON.stringify({ version: 1, lastCompleteDay: { 'unique-users': daysAgo(8) } }));
    const first = await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up', '--max-days', '3'));
    expect(first.code, first.stderr).toBe(0);
    expect(await listFiles(out)).toEqual([STATE, ...[7, 6, 5].map((n) => `unique-users/${daysAgo(n)}.csv`)]);
    expect(await lastCompleteDays(out)).toEqual({ 'unique-users': daysAgo(5) });
    const second = await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up', '--max-days', '3'));
    expect(second.code, second.stderr).toBe(0);
    expect(await lastCompleteDays(out)).toEqual({ 'unique-users': daysAgo(2) });
  });

  it('a failed day stops the state there, and the next --catch-up fetches it again', async () => {
    const out = await tempDir();
    await mkdir(out, { recursive: true });
    await writeFile(join(out, STATE), JSON.stringify({ version: 1, lastCompleteDay: { traffic: daysAgo(4) } }));
    sandbox.setFaults({ failNth: { n: 2, status: 503, times: 100 } });
    const failed = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--concurrency', '1', '--retries', '0'));
    expect(failed.code).toBe(4);
    expect(await lastCompleteDays(out)).toEqual({ traffic: daysAgo(3) });
    // The unit after the failed one failed the same way: the vendor is down, so the run stopped there and that day
    // was not attempted; it stays pending as a day the run did not finish.
    expect(await pendingDays(out, 'traffic')).toEqual({ [daysAgo(2)]: 'failed', [daysAgo(1)]: 'interrupted' });
    sandbox.setFaults({});
    const before = sandbox.requests.length;
    const retried = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(retried.code, retried.stderr).toBe(0);
    expect(
      metricRequestsSince(before)
        .map((request) => request.query.datetime_gte)
        .sort(),
    ).toEqual([2, 1].map((n) => `${daysAgo(n)}T00:00:00Z`));
    expect(await lastCompleteDays(out)).toEqual({ traffic: daysAgo(2) });
    expect(await pendingDays(out, 'traffic')).toEqual({ [daysAgo(1)]: 'not-over' });
  });
});
