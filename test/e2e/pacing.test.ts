/**
 * A good guest at the vendor's limit: imports over real HTTP against a sandbox that throttles at 10 requests a second
 * (a sliding window, as Django REST Framework counts), with and without announcing its limit, at --concurrency 4 and
 * 16. The command runs in this process on the real clock: the timings are the point.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RecordedRequest, type Sandbox } from '../../src/sandbox/index.js';
import { virtualClock } from '../helpers/clock.js';
import { clockedCli, noonToday } from '../helpers/sandbox-clock.js';
import { readTree, useTempDirs } from '../helpers/tmp.js';
import { importArgs as vendorImport, SECRET_ENV, VENDOR_SECRET } from '../helpers/vendor.js';

const LIMIT = 10;
// The day clock of the runs and the sandboxes: days count from it, not from the wall clock (a run across midnight).
const CLOCK = noonToday();
const { runCli: runInProcess } = clockedCli(CLOCK, SECRET_ENV);
const utcDay = (daysAgo: number): string => new Date(CLOCK.getTime() - daysAgo * 86_400_000).toISOString().slice(0, 10);
// Six days that have ended everywhere: 18 units (3 metrics x 6 days), so --concurrency 16 has 16 in flight.
const FROM = utcDay(7);
const TO = utcDay(2);

interface Answer extends RecordedRequest {
  readonly at: number;
}

let sandbox: Sandbox;
const answers: Answer[] = [];
const tempDir = useTempDirs('pacing-');
let reference: Map<string, Buffer>;
let unthrottledRequests = 0;

/** Every sandbox of the file serves the same data: 20 stores, so two pages a unit at 10 a page. */
const SANDBOX_DATA = { stores: 20, zones: 3, days: 9, clientSecret: VENDOR_SECRET, now: () => CLOCK };

function importArgs(vendor: Sandbox, out: string, ...extra: string[]): string[] {
  // 20 stores at 10 a page: two pages a unit, 36 requests in all.
  return vendorImport(vendor, 'all', out, '--from', FROM, '--to', TO, '--page-size', '10', ...extra);
}

function metricAnswers(seen: readonly Answer[]): Answer[] {
  return seen.filter((answer) => answer.path.startsWith('/api/bi/area-metrics/'));
}

beforeAll(async () => {
  sandbox = await startSandbox({ ...SANDBOX_DATA, onRequest: (request) => answers.push({ ...request, at: performance.now() }) });
  const out = await tempDir();
  const plain = await runInProcess(importArgs(sandbox, out));
  expect(plain.code, plain.stderr).toBe(0);
  reference = await readTree(out);
  expect(reference.size).toBe(18);
  unthrottledRequests = metricAnswers(answers).length;
  expect(unthrottledRequests).toBe(36);
});

afterAll(async () => {
  await sandbox?.close();
});

const ANNOUNCED = [
  { announced: 'announced with the IETF draft fields', headers: 'draft' },
  { announced: 'announced with X-RateLimit-* headers', headers: 'x' },
  { announced: 'not announced (only 429 with Retry-After: 1)', headers: 'none' },
] as const;

// Each run has a sandbox of its own, and the three of a --concurrency go side by side: they mostly wait on the limit.
// Three at once, not all six: one event loop serving six sandboxes and six runs under a busy machine lagged.
describe.each([4, 16])('a vendor limit of 10 requests a second, --concurrency %i', (concurrency) => {
  it.concurrent.for(ANNOUNCED)(
    '$announced: exit 0, the same files, at most 2 in 100 requests answered 429 once settled, near the limit',
    async ({ headers }, context) => {
      const { expect } = context;
      const seen: Answer[] = [];
      const limited = await startSandbox({
        ...SANDBOX_DATA,
        faults: { rateLimit: { perSecond: LIMIT, headers } },
        onRequest: (request) => seen.push({ ...request, at: performance.now() }),
      });
      try {
        const out = await tempDir(context);
        const result = await runInProcess(importArgs(limited, out, '--concurrency', String(concurrency)));
        expect(result.code, result.stderr).toBe(0);
        expect(await readTree(out)).toEqual(reference);

        const metric = metricAnswers(seen);
        const pages = metric.filter((answer) => answer.status === 200);
        const throttled = metric.filter((answer) => answer.status === 429);
        expect(pages).toHaveLength(unthrottledRequests);
        // The run's own numbers are the vendor's.
        expect(result.stderr).toContain(`imported 18 of 18 units, `);
        expect(result.stderr).toMatch(
          new RegExp(`, ${metric.length} requests${throttled.length ? `, ${throttled.length} answered 429` : ''}, pace 9\\.9/s\\n`),
        );

        const firstThrottled = throttled[0]?.at;
        if (headers === 'none') {
          // Learning the limit costs the requests the slow start had let go when the first 429 came back (a fifth of
          // the vendor's quota and one or two, whatever the concurrency), then every request is held for its
          // Retry-After: after that, the run is settled.
          expect(firstThrottled).toBeDefined();
          const learning = throttled.filter((answer) => answer.at < firstThrottled! + 1000);
          expect(learning.length).toBeLessThanOrEqual(LIMIT / 5 + 2);
          const settled = metric.filter((answer) => answer.at >= firstThrottled! + 1000);
          expect(throttled.length - learning.length).toBeLessThanOrEqual(0.02 * settled.length);
        } else {
          // Paced from the first answer on: no 429 at all.
          expect(throttled.length).toBeLessThanOrEqual(0.02 * metric.length);
        }
        // From the first answer to the last: near the time the limit allows for the pages. The 1.1x target is measured
        // by `npm run bench` (docs/bench.md, Pacing: 1.0x to 1.1x here on a quiet machine); a busy 2-core machine's
        // event-loop lag broke 1.3x (1.08 s of room over the 3.6 s of 36 pages), so this asserts 1.45x (1.62 s of
        // room), which still catches a pacer that sleeps twice what it computed (1.5x to 1.75x here: its sliding
        // window lets part of each burst through at once).
        const seconds = (metric.at(-1)!.at - metric[0]!.at) / 1000;
        expect(seconds).toBeLessThanOrEqual((1.45 * pages.length) / LIMIT);
      } finally {
        await limited.close();
      }
    },
  );
});

describe('the numbers of a paced run', () => {
  it('are in the JSON unit and summary lines, each change of pace at -v, the state and the Prometheus lines', async () => {
    // A limit the run does not reach: the numbers are the point, not the waits.
    sandbox.setFaults({ rateLimit: { perSecond: 100, headers: 'draft' } });
    answers.length = 0;
    const out = await tempDir();
    const result = await runInProcess(importArgs(sandbox, out, '--log-format', 'json', '-v'));
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const pace = lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('pace: '));
    expect(pace).toEqual([
      expect.objectContaining({ level: 'debug', pace_rps: 99.01, quota: 100, window_seconds: 1, source: 'announced' }),
    ]);
    const units = lines.filter((line) => line.unit !== undefined && line.rows !== undefined);
    expect(units).toHaveLength(18);
    for (const unit of units) expect(unit).toMatchObject({ requests: 2, throttled: 0, pace_rps: 99.01 });
    const summary = lines.at(-1)!;
    expect(summary).toMatchObject({ units: 18, requests: 36, throttled: 0, pace_rps: 99.01 });

    const state = JSON.parse(await readFile(join(out, '.area-metrics-state.json'), 'utf8')) as { lastRun: Record<string, unknown> };
    expect(state.lastRun).toMatchObject({ exitCode: 0, requests: 36, throttled: 0, paceRps: 99.01 });
    const prometheus = await runInProcess(['status', '-o', out, '--format', 'prometheus']);
    expect(prometheus.stdout).toContain('\narea_metrics_last_run_requests 36\n');
    expect(prometheus.stdout).toContain('\narea_metrics_last_run_throttled_responses 0\n');
    const text = await runInProcess(['status', '-o', out]);
    expect(text.stdout).toMatch(/last run: .*, requests 36 \(0 answered 429, pace 99\.01\/s\)/);
  });
});

describe('--max-rps', () => {
  it('caps the pace of an import (flag or AREA_METRICS_MAX_RPS) and of check, from the first request', async () => {
    sandbox.setFaults({});
    const clock = virtualClock();
    const out = await tempDir();
    const result = await runInProcess(importArgs(sandbox, out, '--to', FROM), { clock, env: { AREA_METRICS_MAX_RPS: '2' } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/, 6 requests, pace 2\.0\/s\n/);
    // Six requests at two a second: at least two more windows after the first (each 1% longer).
    expect(clock.elapsed()).toBeGreaterThanOrEqual(2020);

    const checkClock = virtualClock();
    const check = await runInProcess(['check', '--base-url', sandbox.url, '--client-id', sandbox.clientId, '--max-rps', '1'], {
      clock: checkClock,
    });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout.match(/^OK /gm)).toHaveLength(3);
    // One probe a second: the three metrics' probes share one pace.
    expect(checkClock.elapsed()).toBeGreaterThanOrEqual(2000);
  });

  it.each(['0', '0.004', '0.09', '-1', 'ten', '10001'])(
    'refuses %s with exit 2 and one line: no pace below the floor of 0.1/s',
    async (value) => {
      const result = await runInProcess(importArgs(sandbox, 'unused', '--max-rps', value));
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/--max-rps .* must be a number of requests a second from 0\.1 to 10000/),
      ]);
    },
  );
});
