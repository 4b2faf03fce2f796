/**
 * A day is complete only when its data is: a vendor that has not published yet, publishes store by store, or corrects
 * a day later; per-metric catch-up, --max-days cuts, --lookback, future days, stale temp files, two runs on one
 * folder and state files that cannot be trusted. The BUILT binary against a sandbox started in the test.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, importArgs, useSandbox } from '../helpers/vendor.js';
import { deadPid, livePid } from '../helpers/pids.js';
import { dataFiles, listFiles, readTree, useTempDirs } from '../helpers/tmp.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const STATE = '.area-metrics-state.json';
// Four stores: S001 +02:00, S002 +00:00, S003 -05:00, S004 +05:30.
const STORES = ['S001', 'S002', 'S003', 'S004'];

/**
 * The clock of the sandbox and of every run: at noon the day before yesterday is over and yesterday is not (it is
 * recorded pending `not-over` by every run that asks for it).
 */
const CLOCK = noonToday();

/** UTC day `n` days before today (negative: after). */
const daysAgo = daysBefore(CLOCK);

// The secret in the environment, as the README teaches: a flag would add its warning to every run.
const { runCli, startCli } = clockedCli(CLOCK, SECRET_ENV);

/** The warning of a run that asked for yesterday, which is not over: one line for the metrics it imported. */
function notOver(metrics: string): string {
  return `warn: ${metrics} ${daysAgo(1)}: not over until ${daysAgo(-1)}T00:59:59Z, when the last store's local day in it ends`;
}

const tempDir = useTempDirs('complete-days-');

function requestedDays(before: number, metric?: string): string[] {
  return sandbox.requests
    .slice(before)
    .filter((request) => request.path.startsWith(`/api/bi/area-metrics/${metric ?? ''}`))
    .map((request) => (request.query.datetime_gte ?? '').slice(0, 10))
    .sort();
}

interface StateV4 {
  version: number;
  metrics: Record<
    string,
    { complete?: [string, string][]; stores?: number; pending?: Record<string, { reason: string; missingStores?: number }> }
  >;
}

async function readState(out: string): Promise<StateV4> {
  return JSON.parse(await readFile(join(out, STATE), 'utf8')) as StateV4;
}

/** A key's latest complete day. */
function lastComplete(state: StateV4, key: string): string | undefined {
  return state.metrics[key]?.complete?.at(-1)?.[1];
}

async function writeV1State(out: string, lastCompleteDay: Record<string, string>): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFile(join(out, STATE), JSON.stringify({ version: 1, lastCompleteDay }));
}

function warnings(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('warn: '));
}

/** The store codes in a CSV file's rows. */
async function storesIn(path: string): Promise<string[]> {
  const rows = (await readFile(path, 'utf8')).split('\n').slice(1).filter(Boolean);
  return [...new Set(rows.map((row) => row.split(',')[0]!))].sort();
}

const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 4, zones: 2, days: 12, clientId: 'days-client' });

describe('a vendor that has not published yet', () => {
  it('all --catch-up: no file, not recorded complete, a warning per metric (yesterday not over: one for all), exit 0; once published the next run fetches it', async () => {
    const out = await tempDir();
    const late = daysAgo(2);
    const yesterday = daysAgo(1);
    await writeV1State(out, { 'unique-users': daysAgo(3), 'avg-screen-time': daysAgo(3), traffic: daysAgo(3) });
    sandbox.setPublishing({ hidden: [{ day: late }] });
    const early = await runCli(importArgs(sandbox, 'all', out, '--catch-up'));
    expect(early.code, early.stderr).toBe(0);
    const lines = warnings(early.stderr);
    const metrics = METRIC_NAMES;
    for (const metric of metrics) {
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(`^warn: ${metric} ${late}: no results: the vendor has not published this day yet; .*the next --catch-up asks again$`),
        ),
      );
    }
    expect(lines.at(-1)).toContain(notOver(metrics.join(', ')));
    expect(lines).toHaveLength(4);
    expect(await listFiles(out)).toEqual([STATE, ...[...metrics].sort().map((metric) => `${metric}/${yesterday}.csv`)]);
    const state = await readState(out);
    expect(lastComplete(state, 'traffic')).toBe(daysAgo(3));
    expect(state.metrics.traffic?.pending).toEqual({
      [late]: { reason: 'not-published', stores: 0 },
      [yesterday]: { reason: 'not-over', stores: 4 },
    });

    sandbox.setPublishing({});
    const before = sandbox.requests.length;
    const later = await runCli(importArgs(sandbox, 'all', out, '--catch-up'));
    expect(later.code, later.stderr).toBe(0);
    expect(warnings(later.stderr)).toEqual([expect.stringContaining(notOver(metrics.join(', ')))]);
    expect(requestedDays(before)).toEqual([late, late, late, yesterday, yesterday, yesterday]);
    expect(await storesIn(join(out, 'traffic', `${late}.csv`))).toEqual(STORES);
    const healed = await readState(out);
    expect(healed.metrics.traffic).toMatchObject({ complete: [[daysAgo(3), late]], stores: 4 });
    expect(healed.metrics.traffic?.pending).toEqual({ [yesterday]: { reason: 'not-over', stores: 4 } });
  });

  it('an empty window is never settled: a day 5 days old with no results stays incomplete', async () => {
    const out = await tempDir();
    await writeV1State(out, { traffic: daysAgo(6) });
    sandbox.setPublishing({ hidden: [{ day: daysAgo(5) }] });
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toEqual([
      expect.stringContaining(`traffic ${daysAgo(5)}: no results`),
      expect.stringContaining(notOver('traffic')),
    ]);
    // The later days are written and complete (yesterday is not over); the empty day stays pending, a gap that status shows.
    expect(await listFiles(out)).toEqual([STATE, ...[4, 3, 2, 1].map((n) => `traffic/${daysAgo(n)}.csv`)]);
    const state = await readState(out);
    expect(state.metrics.traffic?.complete).toEqual([
      [daysAgo(6), daysAgo(6)],
      [daysAgo(4), daysAgo(2)],
    ]);
    expect(state.metrics.traffic?.pending).toEqual({
      [daysAgo(5)]: { reason: 'not-published', stores: 0 },
      [daysAgo(1)]: { reason: 'not-over', stores: 4 },
    });
  });
});

describe('a vendor that publishes store by store', () => {
  it('a window lacking stores of the last complete day: written with what there is, not complete, one warning; complete once published', async () => {
    const out = await tempDir();
    const first = await runCli(importArgs(sandbox, 'traffic', out, '--date', daysAgo(3)));
    expect(first.code, first.stderr).toBe(0);
    expect((await readState(out)).metrics.traffic).toMatchObject({ complete: [expect.arrayContaining([daysAgo(3)])], stores: 4 });

    sandbox.setPublishing({ hidden: [{ day: daysAgo(2), stores: ['S002', 'S003'] }] });
    const partial = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(partial.code, partial.stderr).toBe(0);
    expect(warnings(partial.stderr)).toEqual([
      `warn: traffic ${daysAgo(2)}: partly published: 2 of 4 stores of the latest complete day missing (S002, S003); file written with 2 stores, not recorded complete; the next --catch-up asks again`,
      expect.stringContaining(notOver('traffic')),
    ]);
    expect(await storesIn(join(out, 'traffic', `${daysAgo(2)}.csv`))).toEqual(['S001', 'S004']);
    const state = await readState(out);
    // Yesterday is judged on its own (not over yet), not held back by the partly published day.
    expect(state.metrics.traffic?.complete).toEqual([[daysAgo(3), daysAgo(3)]]);
    expect(state.metrics.traffic?.pending).toEqual({
      [daysAgo(2)]: { reason: 'partly-published', missingStores: 2, stores: 2 },
      [daysAgo(1)]: { reason: 'not-over', stores: 4 },
    });

    sandbox.setPublishing({});
    const complete = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(complete.code, complete.stderr).toBe(0);
    expect(await storesIn(join(out, 'traffic', `${daysAgo(2)}.csv`))).toEqual(STORES);
    expect(lastComplete(await readState(out), 'traffic')).toBe(daysAgo(2));
  });

  it('a day --settle-days old is recorded complete with the missing stores named, and the next day is judged by it', async () => {
    const out = await tempDir();
    expect((await runCli(importArgs(sandbox, 'unique-users', out, '--date', daysAgo(4)))).code).toBe(0);
    // S004 closed three days ago: it never reports again.
    sandbox.setPublishing({ hidden: [3, 2, 1].map((n) => ({ day: daysAgo(n), stores: ['S004'] })) });
    const result = await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up'));
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toEqual([
      `warn: unique-users ${daysAgo(3)}: 1 of 4 stores of the latest complete day missing (S004); recorded complete anyway: the day is at least --settle-days 3 days old`,
      expect.stringContaining(notOver('unique-users')),
    ]);
    expect((await readState(out)).metrics['unique-users']).toMatchObject({ complete: [expect.arrayContaining([daysAgo(2)])], stores: 3 });
  });

  it('with --store the expectation is those stores; a store with no results writes no file', async () => {
    const out = await tempDir();
    await writeV1State(out, { 'traffic[store=S001,S002]': daysAgo(3) });
    sandbox.setPublishing({ hidden: [{ day: daysAgo(2), stores: ['S002'] }] });
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--store', 'S001', '--store', 'S002'));
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toEqual([
      expect.stringContaining(`traffic ${daysAgo(2)}: partly published: 1 of 2 stores asked for missing (S002)`),
      expect.stringContaining(notOver('traffic')),
    ]);
    expect(await listFiles(out)).toEqual([
      STATE,
      `traffic/${daysAgo(2)}.store-S001.csv`,
      `traffic/${daysAgo(1)}.store-S001.csv`,
      `traffic/${daysAgo(1)}.store-S002.csv`,
    ]);
    expect(lastComplete(await readState(out), 'traffic[store=S001,S002]')).toBe(daysAgo(3));
  });
});

describe('future days and today', () => {
  it.each([
    [['--date', daysAgo(-1)], `--date ${daysAgo(-1)} is in the future`],
    [['--from', daysAgo(1), '--to', daysAgo(-1)], `--to ${daysAgo(-1)} is in the future`],
  ])('%j is a usage error before any request', async (window, message) => {
    const out = await tempDir();
    const before = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'traffic', out, ...window));
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(message)]);
    expect(sandbox.requests.length).toBe(before);
    expect(await dataFiles(out)).toEqual([]);
  });

  it('today may be imported, with a warning naming it, and is never recorded complete', async () => {
    const out = await tempDir();
    const today = daysAgo(0);
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--date', today));
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toEqual([expect.stringContaining(`warn: traffic ${today}: not over until ${daysAgo(-2)}T00:59:59Z`)]);
    expect(lastComplete(await readState(out), 'traffic')).toBeUndefined();
  });
});

describe('--catch-up per metric', () => {
  it('each metric from its own last complete day: one 5 days behind, one without state, one up to date', async () => {
    const out = await tempDir();
    await writeV1State(out, { traffic: daysAgo(6), 'avg-screen-time': daysAgo(1) });
    const before = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'all', out, '--catch-up'));
    expect(result.code, result.stderr).toBe(0);
    expect(requestedDays(before, 'traffic')).toEqual([5, 4, 3, 2, 1].map(daysAgo));
    expect(requestedDays(before, 'unique-users')).toEqual([daysAgo(1)]);
    expect(requestedDays(before, 'avg-screen-time')).toEqual([]);
    const state = await readState(out);
    // Yesterday is not over: the metrics that asked for it end at the day before, the one up to date stays.
    expect(lastComplete(state, 'traffic')).toBe(daysAgo(2));
    expect(lastComplete(state, 'unique-users')).toBeUndefined();
    expect(lastComplete(state, 'avg-screen-time')).toBe(daysAgo(1));
  });

  it('a --max-days cut warns naming --max-days, the days imported and the days still missing; exit 0', async () => {
    const out = await tempDir();
    await writeV1State(out, { 'unique-users': daysAgo(10) });
    const result = await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up', '--max-days', '3'));
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result.stderr)).toEqual([
      `warn: unique-users: --max-days 3 cut the new days: importing ${daysAgo(9)}..${daysAgo(7)} now, 6 more days are left (${daysAgo(6)}..${daysAgo(1)}) for the next --catch-up`,
    ]);
    expect(lastComplete(await readState(out), 'unique-users')).toBe(daysAgo(7));
  });
});

describe('--lookback', () => {
  it('re-imports the complete days before: unchanged files stay byte-identical, a corrected day is replaced, the state never moves back', async () => {
    const out = await tempDir();
    expect((await runCli(importArgs(sandbox, 'traffic', out, '--from', daysAgo(4), '--to', daysAgo(2)))).code).toBe(0);
    const before = await readTree(out);

    sandbox.setPublishing({ corrected: [{ day: daysAgo(3), revision: 1 }] });
    const reference = await tempDir();
    expect((await runCli(importArgs(sandbox, 'traffic', reference, '--date', daysAgo(3)))).code).toBe(0);
    const corrected = await readFile(join(reference, 'traffic', `${daysAgo(3)}.csv`));
    expect(corrected).not.toEqual(before.get(`traffic/${daysAgo(3)}.csv`));

    const first = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--lookback', '2'));
    expect(result.code, result.stderr).toBe(0);
    expect(requestedDays(first)).toEqual([3, 2, 1].map(daysAgo));
    const after = await readTree(out);
    expect(after.get(`traffic/${daysAgo(4)}.csv`)).toEqual(before.get(`traffic/${daysAgo(4)}.csv`));
    expect(after.get(`traffic/${daysAgo(2)}.csv`)).toEqual(before.get(`traffic/${daysAgo(2)}.csv`));
    expect(after.get(`traffic/${daysAgo(3)}.csv`)).toEqual(corrected);
    expect(lastComplete(await readState(out), 'traffic')).toBe(daysAgo(2));

    // Up to date, a look-back still re-imports; a re-import that finds nothing keeps the earlier file.
    sandbox.setPublishing({ hidden: [{ day: daysAgo(2) }] });
    const again = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--lookback', '1'));
    expect(again.code, again.stderr).toBe(0);
    expect(warnings(again.stderr)).toEqual([
      `warn: traffic ${daysAgo(2)}: no results on this re-import; the file of the earlier import is kept`,
      expect.stringContaining(notOver('traffic')),
    ]);
    expect((await readTree(out)).get(`traffic/${daysAgo(2)}.csv`)).toEqual(after.get(`traffic/${daysAgo(2)}.csv`));
    expect(lastComplete(await readState(out), 'traffic')).toBe(daysAgo(2));
  });

  it('--lookback without --catch-up is a usage error', async () => {
    const result = await runCli(importArgs(sandbox, 'traffic', await tempDir(), '--date', daysAgo(2), '--lookback', '2'));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--lookback needs --catch-up/);
  });
});

describe('stale temp files', () => {
  it('a run removes temp files whose process is gone, and keeps those of a live run', async () => {
    const out = await tempDir();
    const live = await livePid();
    try {
      const gone = await deadPid();
      await mkdir(join(out, 'traffic'), { recursive: true });
      const stale = `traffic/.${daysAgo(1)}.csv.${gone}.0123abcd.tmp`;
      const busy = `traffic/.${daysAgo(2)}.csv.${live.pid}.4567cdef.tmp`;
      const staleState = `.${STATE}.${gone}.89abcdef.tmp`;
      for (const path of [stale, busy, staleState]) await writeFile(join(out, path), 'half');
      const result = await runCli(importArgs(sandbox, 'unique-users', out, '--date', daysAgo(1)));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`removed ${join(out, stale)}, a temp file left by process ${gone}, which is gone`);
      const files = await listFiles(out);
      expect(files).toContain(busy);
      expect(files).not.toContain(stale);
      expect(files).not.toContain(staleState);
    } finally {
      live.kill();
    }
  });
});

describe('two runs into one folder at the same time', () => {
  it('different metrics: both exit 0, both keys advance, every file is whole', async () => {
    const out = await tempDir();
    await writeV1State(out, { traffic: daysAgo(8), 'unique-users': daysAgo(8) });
    // Slow pages and one unit at a time, so the two runs overlap over their whole length.
    sandbox.setFaults({ latencyMs: 40 });
    const runs = ['traffic', 'unique-users'].map((metric) =>
      startCli(importArgs(sandbox, metric, out, '--catch-up', '--concurrency', '1', '--page-size', '1'), { timeoutMs: 60_000 }),
    );
    const results = await Promise.all(runs.map((run) => run.done));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const state = await readState(out);
    expect(lastComplete(state, 'traffic')).toBe(daysAgo(2));
    expect(lastComplete(state, 'unique-users')).toBe(daysAgo(2));
    const days = [7, 6, 5, 4, 3, 2, 1].map(daysAgo);
    expect(await listFiles(out)).toEqual([
      STATE,
      ...days.map((day) => `traffic/${day}.csv`),
      ...days.map((day) => `unique-users/${day}.csv`),
    ]);
  });

  it("the same metric: both exit 0, the state ends at the day before yesterday, files equal a single run's, no temp or lock file left", async () => {
    const reference = await tempDir();
    await writeV1State(reference, { traffic: daysAgo(6) });
    expect((await runCli(importArgs(sandbox, 'traffic', reference, '--catch-up'))).code).toBe(0);

    const out = await tempDir();
    await writeV1State(out, { traffic: daysAgo(6) });
    sandbox.setFaults({ latencyMs: 40 });
    const runs = [1, 2].map(() =>
      startCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--concurrency', '1', '--page-size', '2'), { timeoutMs: 60_000 }),
    );
    const results = await Promise.all(runs.map((run) => run.done));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect((await readState(out)).metrics.traffic).toMatchObject({ complete: [[daysAgo(6), daysAgo(2)]], stores: 4 });
    const tree = await readTree(out);
    const expected = await readTree(reference);
    expect([...tree.keys()]).toEqual([...expected.keys()]);
    for (const [path, bytes] of expected) if (path !== STATE) expect(tree.get(path), path).toEqual(bytes);
  });
});

describe('a state file that cannot be trusted', () => {
  it.each([
    ['{"lastCompleteDay":{"traffic":"2026-02-30"}}', '"2026-02-30" is not a valid day'],
    ['{"version":1,"lastCompleteDay":{"traffic":"2026-13-01"}}', '"2026-13-01" is not a valid day'],
    ['{"version":1,"lastCompleteDay":{"traffic":"2099-01-01"}}', '2099-01-01 is in the future'],
    ['{"version":1,"lastCompleteDay":{"trafic":"2026-01-01"}}', 'unknown metric key "trafic"'],
    ['{"version":9,"metrics":{}}', 'has version 9, newer than this area-metrics reads'],
  ])('%s: exit 2, one line naming the file and the value, no request', async (content, message) => {
    const out = await tempDir();
    await mkdir(out, { recursive: true });
    await writeFile(join(out, STATE), content);
    const before = sandbox.requests.length;
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up'));
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(join(out, STATE));
    expect(lines[0]).toContain(message);
    expect(sandbox.requests.length).toBe(before);
    expect(await readFile(join(out, STATE), 'utf8')).toBe(content);
  });
});
