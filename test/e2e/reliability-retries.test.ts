/**
 * Fetching: retries, Retry-After, final statuses, timeouts, refused connections and foreign `next` links, over real
 * HTTP against a sandbox (or a scripted loopback server) started in the test. The command runs in this process on a
 * virtual clock, so backoffs and Retry-Afters are checked to the millisecond without being waited out; one run on
 * the real clock (in this process too) shows that a real Retry-After is really waited.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedRequest } from '../../src/sandbox/index.js';
import { waitUntil, type CliResult } from '../helpers/cli.js';
import { virtualClock, type VirtualClock } from '../helpers/clock.js';
import { listenOnLoopback } from '../helpers/loopback.js';
import { closedPort } from '../helpers/ports.js';
import { clockedCli, daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { importArgs as vendorImport, useSandbox, VENDOR_SECRET } from '../helpers/vendor.js';
import { dataFiles, listFiles, readTree, useTempDirs } from '../helpers/tmp.js';

// The day clock of the runs and the sandbox (AREA_METRICS_NOW; the fetch clock is another, virtual in most runs):
// days count from it, not from the wall clock at load time.
const CLOCK = noonToday();
const { runCli: runInProcess } = clockedCli(CLOCK);
// The day before yesterday: every store's local day in its UTC window has ended, so the sandbox serves all of it.
const DAY = daysBefore(CLOCK)(2);

interface Timed extends RecordedRequest {
  readonly at: number;
}

/** Metric requests as answered, with the time the answer was sent. */
const answered: Timed[] = [];
const tempDir = useTempDirs('reliability-retries-');
let reference: Map<string, Buffer>;

// The secret stays a flag here: a test swaps it in the arguments for a wrong one.
function importArgs(out: string, ...extra: string[]): string[] {
  return vendorImport(sandbox, 'unique-users', out, '--client-secret', VENDOR_SECRET, '--date', DAY, '--page-size', '2', ...extra);
}

/** A day of unique users from a crafted server at `baseUrl` into `out`, with two retries. */
function argsFor(baseUrl: string, out: string): string[] {
  return vendorImport(
    { url: baseUrl, clientId: 'c' },
    'unique-users',
    out,
    '--client-secret',
    VENDOR_SECRET,
    '--date',
    DAY,
    '--retries',
    '2',
  );
}

function metricRequests(): Timed[] {
  return answered.filter((request) => request.path.startsWith('/api/bi/area-metrics/'));
}

interface ScriptedServer {
  readonly url: string;
  readonly calls: { path: string; authorization: string | undefined; at: number }[];
  close(): Promise<void>;
}

/** A tiny loopback server whose Nth request (1-based) is answered by `answer`; it records every call. */
async function startScripted(answer: (n: number, request: IncomingMessage, response: ServerResponse) => void): Promise<ScriptedServer> {
  const calls: ScriptedServer['calls'] = [];
  const server: Server = createServer((request, response) => {
    calls.push({ path: request.url ?? '', authorization: request.headers.authorization, at: Date.now() });
    answer(calls.length, request, response);
  });
  const { url, close } = await listenOnLoopback(server);
  return { url, calls, close };
}

function envelopeFor(day: string): string {
  const results = [{ store_code: 'S1', date: `${day}T00:00:00-02:00`, granularity: 'daily', values: [{ zone: 'A', unique_users: 3 }] }];
  return JSON.stringify({ count: 1, next: null, previous: null, results });
}

const scripted: ScriptedServer[] = [];
async function scriptedServer(answer: Parameters<typeof startScripted>[0]): Promise<ScriptedServer> {
  const server = await startScripted(answer);
  scripted.push(server);
  return server;
}

/** The command in this process, on a virtual clock: its waits are recorded in `clock.waits`, not waited out. */
async function runVirtual(args: readonly string[]): Promise<CliResult & { clock: VirtualClock }> {
  const clock = virtualClock();
  return { ...(await runInProcess(args, { clock })), clock };
}

function expectNoSecret(result: CliResult): void {
  expect(result.stdout).not.toContain(VENDOR_SECRET);
  expect(result.stderr).not.toContain(VENDOR_SECRET);
}

const sandbox = useSandbox({
  port: 0,
  stores: 3,
  zones: 3,
  days: 5,
  clientId: 'retry-client',
  now: () => CLOCK,
  onRequest: (request) => answered.push({ ...request, at: Date.now() }),
});

beforeAll(async () => {
  const out = await tempDir();
  const clean = await runInProcess(importArgs(out));
  expect(clean.code, clean.stderr).toBe(0);
  reference = await readTree(out);
  // The reference really is the sandbox's data: one row per zone entry of each result.
  const results = sandbox.results('unique-users', { gte: `${DAY}T00:00:00Z`, lte: `${DAY}T23:59:59Z` }) as { values: unknown[] }[];
  const rows = results.reduce((total, result) => total + result.values.length, 0);
  const csv = reference.get(`unique-users/${DAY}.csv`)?.toString('utf8') ?? '';
  expect(csv.trimEnd().split('\n')).toHaveLength(rows + 1);
  expect(results.length).toBeGreaterThan(2); // more than one page at --page-size 2
  answered.length = 0;
});

afterEach(async () => {
  // A request the client gave up on (timeout test) is still answered later, after its latency: let it land here, not
  // in the next test's record.
  await waitUntil(() => sandbox.requests.every((request) => request.status !== 0), 'the sandbox to answer every request');
  answered.length = 0;
  await Promise.all(scripted.splice(0).map((server) => server.close()));
});

describe('transient failures are retried and leave no trace', () => {
  it.each([500, 502, 503, 504])('HTTP %i, then success: exit 0 and files identical to a clean run', async (status) => {
    const out = await tempDir();
    sandbox.setFaults({ failNth: { n: 1, status } });
    const result = await runVirtual(importArgs(out, '--retries', '3'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(new RegExp(`HTTP ${status}.*retry 1/3 in 0\\.\\d s`));
    // One backoff, of full jitter under the first window (0.5 s): the only wait of the run.
    expect(result.clock.waits).toHaveLength(1);
    expect(result.clock.waits[0]).toBeLessThan(500);
    expect(await readTree(out)).toEqual(reference);
    // 1 failure + 2 pages.
    expect(metricRequests().map((request) => request.status)).toEqual([status, 200, 200]);
    expectNoSecret(result);
  });

  it('a failure on a later page is retried too', async () => {
    const out = await tempDir();
    sandbox.setFaults({ failNth: { n: 2, status: 502 } });
    const result = await runVirtual(importArgs(out, '--retries', '2'));
    expect(result.code, result.stderr).toBe(0);
    expect(metricRequests().map((request) => [request.query.page ?? '1', request.status])).toEqual([
      ['1', 200],
      ['2', 502],
      ['2', 200],
    ]);
    expect(await readTree(out)).toEqual(reference);
  });

  /** `run` of an import whose first request the sandbox refuses with 429 and a Retry-After of `seconds`: retried once, whole. */
  async function throttledOnce<Result extends CliResult>(
    run: (args: readonly string[]) => Promise<Result>,
    seconds: number,
  ): Promise<{ result: Result; requests: Timed[] }> {
    const out = await tempDir();
    sandbox.setFaults({ rateLimitNth: { n: 1, retryAfterSeconds: seconds } });
    const result = await run(importArgs(out, '--retries', '2'));
    expect(result.code, result.stderr).toBe(0);
    const requests = metricRequests();
    expect(requests.map((request) => request.status)).toEqual([429, 200, 200]);
    expect(result.stderr).toMatch(new RegExp(`HTTP 429.*retry 1/2 in ${seconds}\\.0 s`));
    expect(await readTree(out)).toEqual(reference);
    return { result, requests };
  }

  it('429 with Retry-After in seconds: waits at least that long, then succeeds', async () => {
    const { result } = await throttledOnce(runVirtual, 2);
    // The server's Retry-After, to the millisecond (the first backoff of full jitter is below 0.5 s): the pacer
    // holds every request of the run for it.
    expect(result.clock.waits).toEqual([2000]);
  });

  it('a run on the real clock really waits a Retry-After out', async () => {
    const { requests } = await throttledOnce(runInProcess, 1);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it('429 with Retry-After as an HTTP date is honoured', async () => {
    let sentAt = 0;
    const server = await scriptedServer((n, _request, response) => {
      if (n === 1) {
        // HTTP dates have whole seconds: 2 s ahead means a wait of 1 to 2 s after the answer.
        sentAt = Date.now();
        response.writeHead(429, { 'Retry-After': new Date(Date.now() + 2000).toUTCString(), 'Content-Type': 'application/json' });
        response.end('{"detail":"slow down"}');
        return;
      }
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(envelopeFor(DAY));
    });
    const out = await tempDir();
    const startedAt = Date.now();
    const result = await runVirtual(argsFor(server.url, out));
    expect(result.code, result.stderr).toBe(0);
    expect(server.calls).toHaveLength(2);
    expect(result.clock.waits).toHaveLength(1);
    expect(result.clock.waits[0]).toBeGreaterThan(900);
    // The virtual clock stands at the run's start: the time the run took to ask is in the wait it reads.
    expect(result.clock.waits[0]).toBeLessThanOrEqual(2000 + (sentAt - startedAt));
    expect(await listFiles(out)).toContain(`unique-users/${DAY}.csv`);
  });

  it('a connection reset in the middle of a body is retried', async () => {
    const body = envelopeFor(DAY);
    const server = await scriptedServer((n, _request, response) => {
      if (n === 1) {
        response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(body.length) });
        response.write(body.slice(0, 20));
        setTimeout(() => response.socket?.destroy(), 20);
        return;
      }
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(body);
    });
    const out = await tempDir();
    const result = await runVirtual(argsFor(server.url, out));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/network error.*retry 1\/2/);
    expect(server.calls).toHaveLength(2);
    const csv = (await readTree(out)).get(`unique-users/${DAY}.csv`)?.toString('utf8');
    expect(csv).toBe(`store_code,date,day,granularity,zone,unique_users\nS1,${DAY}T00:00:00-02:00,${DAY},daily,A,3\n`);
  });
});

describe('failures that do not go away', () => {
  it('--retries 1 with a permanent 503: exit 4, says how many attempts, no file', async () => {
    const out = await tempDir();
    sandbox.setFaults({ failNth: { n: 1, status: 503, times: 1000 } });
    const result = await runVirtual(importArgs(out, '--retries', '1'));
    expect(result.code).toBe(4);
    expect(metricRequests()).toHaveLength(2);
    // One line says what failed, for which unit, and how many attempts were made.
    const line = result.stderr.split('\n').find((text) => text.includes('after 2 attempts')) ?? '';
    expect(line).toMatch(/HTTP 503/);
    expect(line).toContain(`unique-users ${DAY}`);
    expect(await dataFiles(out)).toEqual([]);
    expectNoSecret(result);
  });

  it('401 is not retried: exit 3, one request, no file', async () => {
    const out = await tempDir();
    const args = importArgs(out, '--retries', '3');
    args[args.indexOf(VENDOR_SECRET)] = 'not-the-secret';
    const result = await runVirtual(args);
    expect(result.code).toBe(3);
    expect(metricRequests()).toHaveLength(1);
    expect(result.stderr).toMatch(/401/);
    expect(result.stderr).toMatch(/credentials rejected/);
    expect(result.stderr).not.toContain('not-the-secret');
    expect(await dataFiles(out)).toEqual([]);
  });

  it.each([
    [400, 4, /after 1 attempt\b/],
    [403, 3, /credentials rejected/],
    [404, 4, /after 1 attempt\b/],
  ])('HTTP %i is not retried: exit %i after one request', async (status, code, line) => {
    const out = await tempDir();
    sandbox.setFaults({ failNth: { n: 1, status, times: 10 } });
    const result = await runVirtual(importArgs(out, '--retries', '3'));
    expect(result.code).toBe(code);
    expect(metricRequests()).toHaveLength(1);
    expect(result.stderr).toContain(`HTTP ${status}`);
    expect(result.stderr).not.toMatch(/retry 1\//);
    expect(result.stderr).toMatch(line);
    expect(await dataFiles(out)).toEqual([]);
  });

  it('a server slower than --timeout: a timeout is retried, and a second in a row ends the run, exit 4', async () => {
    const out = await tempDir();
    const before = sandbox.requests.length;
    // Timeouts are real time (the virtual clock only takes the backoff between the attempts).
    sandbox.setFaults({ latencyMs: 600 });
    const result = await runVirtual(importArgs(out, '--timeout', '0.2', '--retries', '1'));
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/time(d)? ?out/i);
    expect(result.stderr).toMatch(
      /the API accepts connections but does not answer: timed out after 0\.2 s \(--timeout\), and the next request too/,
    );
    // Both attempts reached the server: the timeout was retried once.
    const attempts = sandbox.requests.slice(before).filter((request) => request.path.includes('unique-users'));
    expect(attempts).toHaveLength(2);
    expect(await dataFiles(out)).toEqual([]);
  });

  it('connection refused is retried, then exit 4 naming the error and the attempts', async () => {
    const out = await tempDir();
    const port = await closedPort();
    const result = await runVirtual(argsFor(`http://127.0.0.1:${port}`, out));
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toMatch(/retry 2\/2/);
    expect(result.stderr).toMatch(/after 3 attempts/);
    // Two backoffs of full jitter, under their windows of 0.5 s and 1 s.
    expect(result.clock.waits).toHaveLength(2);
    expect(result.clock.waits[0]).toBeLessThan(500);
    expect(result.clock.waits[1]).toBeLessThan(1000);
    expect(await dataFiles(out)).toEqual([]);
    expectNoSecret(result);
  });
});

describe('next links on another origin', () => {
  it('are rebased onto --base-url with a warning; the foreign host is never called', async () => {
    const foreign = await scriptedServer((_n, _request, response) => {
      response.writeHead(500);
      response.end();
    });
    sandbox.setFaults({ foreignNextOrigin: foreign.url });
    const out = await tempDir();
    const result = await runInProcess(importArgs(out));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^warn: .*next link on http:\/\/127\.0\.0\.1:\d+ rebased onto http:\/\/127\.0\.0\.1:\d+/m);
    expect(result.stderr).toContain(foreign.url);
    expect(foreign.calls).toEqual([]);
    // Page 2 was fetched from the sandbox itself.
    expect(metricRequests().map((request) => request.query.page ?? '1')).toEqual(['1', '2']);
    expect(await readTree(out)).toEqual(reference);
  });
});
