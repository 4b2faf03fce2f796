/**
 * The start of a run whose vendor's limit is unknown, over real HTTP against the sandbox: a run large enough that its
 * concurrency is at most a hundredth of its requests sends at full concurrency from its first unit's answer on (all
 * of its requests in flight may be refused when an unannounced window fills, and that stays within the share of 429s
 * a run may have); a small one grows from its answers (the slow start). The concurrency is what the sandbox sees:
 * requests that have arrived and wait out its latency, counted at each answer.
 */
import { describe, expect, it } from 'vitest';
import { clockedCli, noonToday } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const CLOCK = noonToday();
const { runCli: runInProcess } = clockedCli(CLOCK, SECRET_ENV);
const utcDay = (daysAgo: number): string => new Date(CLOCK.getTime() - daysAgo * 86_400_000).toISOString().slice(0, 10);
const tempDir = useTempDirs('pacing-start-');

const isMetric = (path: string): boolean => path.startsWith('/api/bi/area-metrics/');
/** Called at each metric answer of the sandbox, while a test listens. */
let onMetricAnswer: (() => void) | undefined;
// 20 stores: at --page-size 1, 20 pages a unit; 3 metrics x 7 days, 21 units: 420 requests, so 4 may go at once.
const sandbox = useSandbox({
  stores: 20,
  zones: 1,
  days: 9,
  now: () => CLOCK,
  onRequest: (request) => {
    if (isMetric(request.path)) onMetricAnswer?.();
  },
});
const CONCURRENCY = 4;

/** The run's metric answers, and the requests in flight at the sandbox at each of the first 20. */
async function inFlightAtEachAnswer(pageSize: number): Promise<{ answers: number; inFlight: number[] }> {
  const vendor = sandbox();
  const seen = { answers: 0, inFlight: [] as number[] };
  vendor.setFaults({ latencyMs: 20 });
  onMetricAnswer = () => {
    seen.answers++;
    // The one being answered has its status already; the others still wait out the latency.
    if (seen.inFlight.length < 20)
      seen.inFlight.push(1 + vendor.requests.filter((request) => request.status === 0 && isMetric(request.path)).length);
  };
  try {
    const out = await tempDir();
    const args = importArgs(vendor, 'all', out, '--from', utcDay(8), '--to', utcDay(2), '--page-size', String(pageSize));
    const result = await runInProcess([...args, '--concurrency', String(CONCURRENCY)]);
    expect(result.code, result.stderr).toBe(0);
  } finally {
    onMetricAnswer = undefined;
  }
  return seen;
}

describe('the start of a run whose vendor announces no limit', () => {
  it('sends at full concurrency from the first unit answer on when the concurrency is at most 1% of the run', async () => {
    const { answers, inFlight } = await inFlightAtEachAnswer(1);
    expect(answers).toBe(420);
    // The slow start would have at most 3 in flight until 11 answers were in; the run's size lets 4 go at once.
    expect(Math.max(...inFlight.slice(1, 11))).toBe(CONCURRENCY);
  });

  it('keeps the slow start for a run where it is not: one at first, then two, from the answers', async () => {
    // 2 pages a unit at --page-size 10: 42 requests, so none may go unafraid.
    const { answers, inFlight } = await inFlightAtEachAnswer(10);
    expect(answers).toBe(42);
    expect(inFlight[0]).toBe(1);
    // A fifth of a request more for each answer accepted: 2 until 6 answers are in.
    expect(Math.max(...inFlight.slice(1, 6))).toBe(2);
  });
});
