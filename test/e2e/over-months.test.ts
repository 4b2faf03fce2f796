/**
 * The importer over months, as a new user meets it: a day the vendor never publishes, an interrupted backfill, a
 * rejected credential, a cron log read a week later, a loader watching mtimes, a setup checked before the first night,
 * and monitoring that alerts on gaps. The command line, run in this process, against a sandbox started in the test.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, VENDOR_SECRET, importArgs, useSandbox } from '../helpers/vendor.js';
import { LOG_TIMESTAMP, waitUntil } from '../helpers/cli.js';
import { dataFiles, useTempDirs } from '../helpers/tmp.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const STATE = '.area-metrics-state.json';
const METRICS = METRIC_NAMES;

/** UTC day `n` days before today. */
/** One clock for the sandbox and every run: at noon (UTC) the day before yesterday is over and yesterday is not. */
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
// The secret in the environment, as the README teaches: a flag would add its warning to every run.
const { runCli, startInProcess } = clockedCli(CLOCK, SECRET_ENV);

const tempDir = useTempDirs('over-months-');

/** The days asked for since request number `before`, per metric or for one, sorted. */
function requestedDays(before: number, metric = ''): string[] {
  return sandbox.requests
    .slice(before)
    .filter((request) => request.path.startsWith(`/api/bi/area-metrics/${metric}`))
    .map((request) => (request.query.datetime_gte ?? '').slice(0, 10))
    .sort();
}

function warnings(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('warn: '));
}

interface StatusReport {
  metrics: {
    key: string;
    firstDay: string | null;
    lastCompleteDay: string | null;
    daysBehind: number | null;
    gaps: [string, string][];
    pending: { day: string; reason: string }[];
    givenUp: [string, string][];
    behind: boolean;
  }[];
  lastRun: { exitCode: number; rows: Record<string, number> } | null;
}

async function status(out: string, ...extra: string[]): Promise<{ code: number | null; report: StatusReport; stderr: string }> {
  const result = await runCli(['status', '-o', out, '--json', ...extra]);
  return { code: result.code, report: JSON.parse(result.stdout) as StatusReport, stderr: result.stderr };
}

const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 3, zones: 2, days: 20, clientId: 'months-client' });

describe('a day the vendor never publishes', () => {
  it('does not stall catch-up: each --max-days run takes new days and retries the pending one, every cut message true', async () => {
    const out = await tempDir();
    const hidden = daysAgo(7);
    sandbox.setPublishing({ hidden: [{ day: hidden }] });
    expect((await runCli(importArgs(sandbox, 'traffic', out, '--date', daysAgo(8)))).code).toBe(0);

    const runs: string[][] = [];
    const cuts: string[] = [];
    for (let run = 0; run < 3; run++) {
      const before = sandbox.requests.length;
      const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--max-days', '3'));
      expect(result.code, result.stderr).toBe(0);
      runs.push(requestedDays(before));
      cuts.push(...warnings(result.stderr).filter((line) => line.includes('--max-days')));
    }
    expect(runs).toEqual([[7, 6, 5].map(daysAgo), [7, 4, 3, 2].map(daysAgo), [7, 1].map(daysAgo)]);
    // Each cut names the days the next run then took.
    expect(cuts).toEqual([
      `warn: traffic: --max-days 3 cut the new days: importing ${daysAgo(7)}..${daysAgo(5)} now, 4 more days are left (${daysAgo(4)}..${daysAgo(1)}) for the next --catch-up`,
      `warn: traffic: --max-days 3 cut the new days: importing ${daysAgo(4)}..${daysAgo(2)} now, 1 more day is left (${daysAgo(1)}) for the next --catch-up`,
    ]);
    expect(await dataFiles(out)).toEqual([8, 6, 5, 4, 3, 2, 1].map((n) => `traffic/${daysAgo(n)}.csv`));

    // Not behind (yesterday is not over yet), but a gap: monitoring alerts, with exit 8 (1 is an internal error).
    const gap = await status(out, '--max-behind', '1');
    expect(gap.code).toBe(8);
    expect(gap.report.metrics[0]).toMatchObject({
      firstDay: daysAgo(8),
      lastCompleteDay: daysAgo(2),
      daysBehind: 1,
      gaps: [[hidden, hidden]],
      pending: [
        { day: hidden, reason: 'not-published' },
        { day: daysAgo(1), reason: 'not-over' },
      ],
    });
    expect(gap.stderr).toContain(`traffic (1 day behind, gaps ${hidden})`);
  });

  it('is given up once, loudly, after --give-up-days; accept records it final, reopen asks again; no hand edit of the state', async () => {
    const out = await tempDir();
    const hidden = daysAgo(7);
    sandbox.setPublishing({ hidden: [{ day: hidden }] });
    expect((await runCli(importArgs(sandbox, 'unique-users', out, '--from', daysAgo(8), '--to', daysAgo(1)))).code).toBe(0);

    const first = await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up', '--give-up-days', '5'));
    expect(first.code, first.stderr).toBe(0);
    const notOver = expect.stringContaining(`warn: unique-users ${daysAgo(1)}: not over until`) as unknown;
    expect(warnings(first.stderr)).toEqual([
      `warn: unique-users ${hidden}: still not published 5 days after its window ended (--give-up-days 5): given up, --catch-up no longer asks for it; ` +
        `\`area-metrics accept unique-users --date ${hidden} -o ${out}\` records it as final, \`area-metrics reopen unique-users --date ${hidden} -o ${out}\` asks for it again`,
      notOver,
    ]);
    // The given-up day is not asked for again; yesterday, not over, is.
    const before = sandbox.requests.length;
    const second = await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up', '--give-up-days', '5'));
    expect(second.code, second.stderr).toBe(0);
    expect(warnings(second.stderr)).toEqual([notOver]);
    expect(requestedDays(before)).toEqual([daysAgo(1)]);
    const settled = sandbox.requests.length;

    const givenUp = await status(out, '--max-behind', '1');
    expect(givenUp.code).toBe(8);
    expect(givenUp.report.metrics[0]).toMatchObject({
      givenUp: [[hidden, hidden]],
      pending: [{ day: daysAgo(1), reason: 'not-over' }],
      gaps: [[hidden, hidden]],
    });
    expect((await runCli(['status', '-o', out])).stdout).toMatch(
      new RegExp(`unique-users .* ${hidden}  ${hidden}  -  +${daysAgo(1)} imported before it was over\\n`),
    );

    const accepted = await runCli(['accept', 'unique-users', '--date', hidden, '-o', out]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(sandbox.requests.length).toBe(settled);
    expect((await status(out, '--max-behind', '1')).code).toBe(0);

    const reopened = await runCli(['reopen', 'unique-users', '--from', hidden, '--to', hidden, '-o', out]);
    expect(reopened.code, reopened.stderr).toBe(0);
    sandbox.setPublishing({});
    const again = sandbox.requests.length;
    expect((await runCli(importArgs(sandbox, 'unique-users', out, '--catch-up'))).code).toBe(0);
    expect(requestedDays(again, 'unique-users')).toEqual([hidden, daysAgo(1)]);
    expect(await dataFiles(out)).toContain(`unique-users/${hidden}.csv`);
    expect((await status(out, '--max-behind', '1')).code).toBe(0);
  });
});

describe('an interrupted backfill', () => {
  it('leaves its unfinished days pending: status names them, --catch-up imports them, then status is clean', async () => {
    const out = await tempDir();
    const [from, to] = [daysAgo(10), daysAgo(1)];
    sandbox.setFaults({ latencyMs: 60 });
    const run = startInProcess(importArgs(sandbox, 'all', out, '--from', from, '--to', to, '--concurrency', '1'), { timeoutMs: 60_000 });
    await waitUntil(() => (run.stderr().match(/ rows from /g) ?? []).length >= 3, 'three units written', 30_000);
    run.kill('SIGINT');
    const interrupted = await run.done;
    expect(interrupted.code).toBe(130);
    sandbox.setFaults({});

    const after = await status(out, '--max-behind', '0');
    expect(after.code).toBe(8);
    const byKey = new Map(after.report.metrics.map((metric) => [metric.key, metric]));
    expect([...byKey.keys()].sort()).toEqual([...METRICS].sort());
    // Every metric had days asked for and not finished: none of them reads "0 behind, nothing pending".
    for (const metric of ['avg-screen-time', 'traffic']) {
      expect(byKey.get(metric)?.pending).toEqual(
        Array.from({ length: 10 }, (_, index) => ({ day: daysAgo(10 - index), reason: 'interrupted', settledBy: ['catch-up'] })),
      );
    }
    expect(byKey.get('unique-users')?.firstDay).toBe(from);
    expect(after.report.lastRun).toMatchObject({ exitCode: 130 });

    const before = sandbox.requests.length;
    const catchUp = await runCli(importArgs(sandbox, 'all', out, '--catch-up'));
    expect(catchUp.code, catchUp.stderr).toBe(0);
    expect(requestedDays(before, 'traffic')).toEqual(Array.from({ length: 10 }, (_, index) => daysAgo(10 - index)));
    // Healed, as far as it can be: yesterday (`to`) stays pending until it is over.
    const healed = await status(out, '--max-behind', '1');
    expect(healed.code, healed.stderr).toBe(0);
    for (const metric of healed.report.metrics) {
      expect(metric).toMatchObject({ firstDay: from, lastCompleteDay: daysAgo(2), gaps: [], pending: [{ day: to, reason: 'not-over' }] });
    }
  });
});

describe('a rejected credential', () => {
  it('ends the run at once: no further request, the rest not attempted, one line naming the cause, exit 3', async () => {
    const out = await tempDir();
    const before = sandbox.requests.length;
    const args = importArgs(sandbox, 'all', out);
    const result = await runCli([...args, '--from', daysAgo(20), '--to', daysAgo(1)], {
      env: { AREA_METRICS_CLIENT_SECRET: 'wrong-secret' },
    });
    expect(result.code).toBe(3);
    // At most the units already in flight (--concurrency 4) were sent before the first 401 came back.
    expect(sandbox.requests.length - before).toBeLessThanOrEqual(4);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('error: '));
    expect(errors).toEqual([
      expect.stringMatching(/^error: unique-users \S+ page 1: GET .*: HTTP 401: credentials rejected; check the client id and secret$/),
      expect.stringMatching(
        /^error: imported 0 of 60 units, 0 rows in [\d.]+ s, \d+ requests?; 1 failed, first: unique-users \S+; 59 not attempted: the credentials were rejected$/,
      ),
    ]);
    expect(result.stderr.trim().split('\n')).toHaveLength(3);
    expect(result.stderr).not.toContain('wrong-secret');
  });
});

describe('a cron log read a week later', () => {
  it('every line starts with its UTC time, the first names the run, a retry warning names metric, day and page', async () => {
    const out = await tempDir();
    sandbox.setFaults({ failNth: { n: 1, status: 503 } });
    const result = await runCli(importArgs(sandbox, 'traffic', out, '--from', daysAgo(3), '--to', daysAgo(2), '--concurrency', '1'));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.rawStderr.trim().split('\n');
    for (const line of lines) expect(line).toMatch(LOG_TIMESTAMP);
    const messages = result.stderr.trim().split('\n');
    expect(messages[0]).toMatch(
      new RegExp(
        `^area-metrics \\d+\\.\\d+\\.\\d+\\S* traffic --from ${daysAgo(3)} --to ${daysAgo(2)}: traffic ${daysAgo(3)}\\.\\.${daysAgo(2)} \\(2 days\\); output ${out}$`,
      ),
    );
    expect(warnings(result.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: traffic ${daysAgo(3)} page 1: GET http://127\\.0\\.0\\.1:\\d+/api/bi/area-metrics/traffic/: HTTP 503.*; retry 1/5 in [\\d.]+ s$`,
        ),
      ),
    ]);
  });
});

describe('a loader that watches mtimes', () => {
  it('a look-back that finds the same bytes leaves the files untouched and says so; a corrected day is replaced', async () => {
    const out = await tempDir();
    expect((await runCli(importArgs(sandbox, 'traffic', out, '--from', daysAgo(3), '--to', daysAgo(1)))).code).toBe(0);
    const path = (n: number): string => join(out, 'traffic', `${daysAgo(n)}.csv`);
    const before = await Promise.all([3, 2, 1].map(async (n) => stat(path(n))));
    sandbox.setPublishing({ corrected: [{ day: daysAgo(3), revision: 1 }] });

    const result = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--lookback', '3', '--log-format', 'json'));
    expect(result.code, result.stderr).toBe(0);
    const entries = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const units = entries.filter((entry) => typeof entry.unit === 'string' && entry.level === 'info');
    expect(units.map((entry) => [entry.unit, entry.path, entry.changed])).toEqual([
      [`traffic ${daysAgo(3)}`, path(3), true],
      [`traffic ${daysAgo(2)}`, path(2), false],
      [`traffic ${daysAgo(1)}`, path(1), false],
    ]);
    // The one warning: yesterday is not over.
    expect(entries.at(-1)).toMatchObject({
      msg: expect.stringMatching(/^imported 3 of 3 units, \d+ rows, 2 unchanged, 1 warning in /),
      unchanged: 2,
    });
    const after = await Promise.all([3, 2, 1].map(async (n) => stat(path(n))));
    for (const index of [1, 2]) {
      expect([after[index]!.ino, after[index]!.mtimeMs]).toEqual([before[index]!.ino, before[index]!.mtimeMs]);
    }
    expect(after[0]!.ino).not.toBe(before[0]!.ino);

    const text = await runCli(importArgs(sandbox, 'traffic', out, '--catch-up', '--lookback', '1'));
    expect(text.stderr).toContain(`traffic ${daysAgo(1)}: `);
    expect(text.stderr).toMatch(new RegExp(`-> ${path(1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(unchanged\\)\\n`));
  });
});

describe('area-metrics check', () => {
  const checkArgs = (...extra: string[]): string[] => ['check', '--base-url', sandbox.url, '--client-id', sandbox.clientId, ...extra];

  it('one page_size=1 request per metric for yesterday; OK per metric; exit 0', async () => {
    const before = sandbox.requests.length;
    const result = await runCli(checkArgs('--client-secret', VENDOR_SECRET));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(METRICS.length);
    METRICS.forEach((metric, index) => expect(lines[index]).toMatch(new RegExp(`^OK +${metric}: 3 results for ${daysAgo(1)}$`)));
    const requests = sandbox.requests.slice(before);
    expect(requests.map((request) => [request.query.page_size, request.query.datetime_gte])).toEqual(
      METRICS.map(() => ['1', `${daysAgo(1)}T00:00:00Z`]),
    );
  });

  it('a rejected secret: one request, one line saying so, exit 3, the secret never printed', async () => {
    const before = sandbox.requests.length;
    const result = await runCli(checkArgs(), { env: { AREA_METRICS_CLIENT_SECRET: 'Not-The-S3cret' } });
    expect(result.code).toBe(3);
    expect(sandbox.requests.length - before).toBe(1);
    expect(result.stdout).toMatch(/^FAIL +unique-users: .*HTTP 401: credentials rejected/);
    expect(`${result.stdout}${result.stderr}`).not.toContain('Not-The-S3cret');
  });

  it("an unreachable URL is exit 4, a body that is not the API's exit 5, bad options exit 2", async () => {
    const unreachable = await runCli([
      'check',
      '--base-url',
      'http://127.0.0.1:9',
      '--client-id',
      'x',
      '--client-secret',
      'y',
      '--retries',
      '0',
    ]);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stdout).toMatch(/^FAIL +unique-users: .*network error/);

    sandbox.setFaults({ truncateNth: { n: 1, times: 100 } });
    const garbled = await runCli(checkArgs('--client-secret', VENDOR_SECRET, '--retries', '0'));
    expect(garbled.code).toBe(5);
    expect(garbled.stdout).toMatch(/^FAIL +unique-users: .*malformed body/);

    expect((await runCli(['check', '--client-id', 'x', '--client-secret', 'y'])).code).toBe(2);
  });
});

describe('accept and reopen', () => {
  it('refuse an unknown metric, today, a missing window and a folder without a state, with exit 2 and one line', async () => {
    const out = await tempDir();
    const none = await runCli(['accept', 'traffic', '--date', daysAgo(2), '-o', out]);
    expect([none.code, none.stderr.trim().split('\n')]).toEqual([2, [expect.stringMatching(/no state file at /)]]);
    expect((await runCli(importArgs(sandbox, 'traffic', out, '--date', daysAgo(2)))).code).toBe(0);
    const cases: [string[], RegExp][] = [
      [['accept', 'trafic', '--date', daysAgo(2)], /unknown metric "trafic"; use unique-users, avg-screen-time, traffic or all/],
      [['accept', 'traffic', '--date', daysAgo(0)], /is today \(UTC\), which is not over yet/],
      [['reopen', 'traffic', '--date', daysAgo(-1)], /is in the future/],
      [['reopen', 'traffic'], /reopen needs --date D or --from D1 --to D2/],
      [['accept', 'traffic', '--date', daysAgo(2), '--from', daysAgo(3)], /--date cannot be combined with --from\/--to/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli([...args, '-o', out]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(message)]);
    }
  });
});

describe('state format 4', () => {
  it('records coverage as ranges, pending days with reasons and the last run; status reads them', async () => {
    const out = await tempDir();
    sandbox.setPublishing({ hidden: [{ day: daysAgo(3) }] });
    expect((await runCli(importArgs(sandbox, 'avg-screen-time', out, '--from', daysAgo(5), '--to', daysAgo(1)))).code).toBe(0);
    const state = JSON.parse(await readFile(join(out, STATE), 'utf8')) as Record<string, unknown>;
    expect(state).toMatchObject({
      version: 5,
      metrics: {
        'avg-screen-time': {
          complete: [
            [daysAgo(5), daysAgo(4)],
            [daysAgo(2), daysAgo(2)],
          ],
          pending: { [daysAgo(3)]: { reason: 'not-published', stores: 0 }, [daysAgo(1)]: { reason: 'not-over', stores: 3 } },
          stores: 3,
        },
      },
      lastRun: { exitCode: 0, command: `avg-screen-time --from ${daysAgo(5)} --to ${daysAgo(1)}` },
    });
  });
});
