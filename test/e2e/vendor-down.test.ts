/**
 * The vendor down: once a unit has used its retries on network errors, timeouts or 5xx and the next request fails
 * the same way, the run ends like it does on a rejected credential. In this process on a virtual clock (the
 * backoffs are counted, not waited), and the BUILT binary at --concurrency 64 for what only its stderr shows.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, LOG_TIMESTAMP } from '../helpers/cli.js';
import { virtualClock } from '../helpers/clock.js';
import { closedPort } from '../helpers/ports.js';
import { clockedCli, noonToday, daysBefore } from '../helpers/sandbox-clock.js';
import { dataFiles, useTempDirs } from '../helpers/tmp.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

// The day clock of the runs and the sandbox (AREA_METRICS_NOW; the fetch clock is another, virtual in some runs):
// days count from it, not from the wall clock at load time.
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);
const runInProcess = runCli;
const utcDay = daysBefore(CLOCK);
// A month: 31 days of three metrics, 93 units.
const FROM = utcDay(32);
const TO = utcDay(2);
const tempDir = useTempDirs('vendor-down-');

function monthArgs(baseUrl: string, out: string, ...extra: string[]): string[] {
  return ['all', '--base-url', baseUrl, '--client-id', 'demo-client', '--from', FROM, '--to', TO, '-o', out, ...extra];
}

const ENV = SECRET_ENV;

function metricRequests(): number {
  return sandbox.requests.filter((request) => request.path.startsWith('/api/bi/area-metrics/')).length;
}

const sandbox = useSandbox({ stores: 3, zones: 2, days: 34, clientId: 'demo-client', now: () => CLOCK });

describe('a month against a dead URL', () => {
  it("ends after one unit's retries and one more request: exit 4, a few lines, every day pending", async () => {
    const out = await tempDir();
    const clock = virtualClock();
    const result = await runInProcess(monthArgs(`http://127.0.0.1:${await closedPort()}`, out), { clock, env: ENV });
    expect(result.code).toBe(4);
    const lines = result.stderr.trim().split('\n');
    // The run's first line, the first unit's five retries and its failure, and the summary naming the cause.
    expect(lines).toHaveLength(8);
    expect(lines.filter((line) => /retry \d\/5/.test(line))).toHaveLength(5);
    expect(lines[6]).toMatch(
      new RegExp(
        `^error: unique-users ${FROM} page 1: GET http://127\\.0\\.0\\.1:\\d+/api/bi/area-metrics/unique-users/: network error: .*ECONNREFUSED.* \\(after 6 attempts\\); check the URL or try again later$`,
      ),
    );
    expect(lines[7]).toMatch(
      new RegExp(
        `^error: imported 0 of 93 units, 0 rows, 5 warnings in \\d+\\.\\d s, 7 requests; 1 failed, first: unique-users ${FROM}; 92 not attempted, left pending: ` +
          `the API is unreachable or failing: unique-users ${FROM} page 1 failed 6 attempts, and the next request failed the same way \\(network error: .*ECONNREFUSED.*\\); check the URL or try again later$`,
      ),
    );
    // The backoffs of one unit (full jitter under 0.5, 1, 2, 4 and 8 s): well under a minute, whatever the draw.
    expect(clock.elapsed()).toBeLessThan(15_500);
    const state = JSON.parse(await readFile(join(out, '.area-metrics-state.json'), 'utf8')) as {
      metrics: Record<string, { pending: Record<string, unknown> }>;
      lastRun: { exitCode: number; requests: number };
    };
    for (const metric of METRIC_NAMES) expect(Object.keys(state.metrics[metric]!.pending)).toHaveLength(31);
    expect(state.lastRun).toMatchObject({ exitCode: 4, requests: 7 });
    expect(await dataFiles(out)).toEqual([]);
  });
});

describe('a vendor answering 5xx', () => {
  it('to every request ends the run the same way: 6 attempts of the first unit, 1 more request, exit 4', async () => {
    sandbox.setFaults({ failNth: { n: 1, status: 503, times: 1000 } });
    const before = metricRequests();
    const out = await tempDir();
    const result = await runInProcess(monthArgs(sandbox.url, out, '--concurrency', '16'), { clock: virtualClock(), env: ENV });
    expect(result.code).toBe(4);
    expect(metricRequests() - before).toBe(7);
    expect(result.stderr).toMatch(
      /92 not attempted, left pending: the API is unreachable or failing: .* failed 6 attempts, and the next request failed the same way \(HTTP 503 /,
    );
    sandbox.setFaults({});
  });

  it('to one unit only fails that unit: the next request is answered and the run goes on', async () => {
    // The first unit's six attempts answer 503, then the vendor answers again.
    sandbox.setFaults({ failNth: { n: 1, status: 503, times: 6 } });
    const out = await tempDir();
    const result = await runInProcess(monthArgs(sandbox.url, out, '--to', utcDay(31), '--concurrency', '1'), {
      clock: virtualClock(),
      env: ENV,
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(new RegExp(`imported 5 of 6 units, .*; 1 failed, first: unique-users ${FROM}\\n`));
    expect(result.stderr).not.toContain('not attempted');
    expect(await dataFiles(out)).toHaveLength(5);
    sandbox.setFaults({});
  });
});

describe('the built binary at --concurrency 64', () => {
  beforeAll(() => assertBuilt());

  /**
   * Every stderr line is one of the run's log lines: no runtime warning (MaxListenersExceededWarning) among them. The
   * runs spawn the binary: a run in this process would print its warnings on the test process's stderr, not on the
   * one checked here.
   */
  function expectOnlyLogLines(stderr: string): void {
    expect(stderr).not.toMatch(/Warning|\(node:\d+\)/);
    for (const line of stderr.trimEnd().split('\n')) expect(line).toMatch(LOG_TIMESTAMP);
  }

  it('against a dead URL: a month ends in seconds, exit 4, nothing on stderr but its log lines', async () => {
    const out = await tempDir();
    const result = await runCli(monthArgs(`http://127.0.0.1:${await closedPort()}`, out, '--concurrency', '64', '--retries', '2'), {
      env: ENV,
      process: true,
    });
    expect(result.code).toBe(4);
    // Two backoffs of at most 0.5 and 1 s: the run's own time (its summary, not counting node's start, which a busy
    // machine stretches) is under 2 s, and 6 s leaves that machine room. That the run stopped after one unit's
    // retries is what its 5 lines below prove.
    const seconds = Number(/, 0 rows(?:, \d+ warnings?)? in (\d+\.\d) s, /.exec(result.stderr)?.[1]);
    expect(seconds).toBeLessThan(6);
    expect(result.rawStderr.trimEnd().split('\n')).toHaveLength(5);
    expectOnlyLogLines(result.rawStderr);
  });

  it('against a vendor limit it has to learn: every unit in flight held at once, exit 0, no runtime warning', async () => {
    // 66 units of one page each, all of them in flight at the first 429.
    sandbox.setFaults({ rateLimit: { perSecond: 30 } });
    const out = await tempDir();
    const result = await runCli(monthArgs(sandbox.url, out, '--from', utcDay(23), '--concurrency', '64'), { env: ENV, process: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/imported 66 of 66 units, .* answered 429, pace 29\.7\/s\n$/);
    expectOnlyLogLines(result.rawStderr);
    sandbox.setFaults({});
  });
});
