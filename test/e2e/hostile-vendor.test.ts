/**
 * A vendor that lies, stalls or never ends: a vendor of our own making on loopback (the real path and envelope, with
 * crafted headers and bodies) against runs in this process on the real clock, with short caps and timeouts, so the
 * bound of each run is the point. After every run: no runtime warning, and the state readable. The endless body
 * runs the BUILT binary, whose peak memory only a process shows.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ImportState } from '../../src/state/import-state.js';
import { STATE_FILE_NAME } from '../../src/destination/spec.js';
import { METRIC_NAMES } from '../../src/metrics/descriptors.js';
import { assertBuilt, BIN, stopAllClis, type CliResult } from '../helpers/cli.js';
import { answerPage, envelope, resultFor, startCraftedVendor, type CraftedVendor } from '../helpers/crafted-vendor.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { useTempDirs } from '../helpers/tmp.js';
import { loadStateFile } from '../helpers/state-file.js';
import { SECRET_ENV } from '../helpers/vendor.js';

const utcDay = (daysAgo: number): string => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
const tempDir = useTempDirs('hostile-vendor-');
const vendors: CraftedVendor[] = [];
const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};

async function vendor(answer: Parameters<typeof startCraftedVendor>[0]): Promise<CraftedVendor> {
  const started = await startCraftedVendor(answer);
  vendors.push(started);
  return started;
}

function args(baseUrl: string, out: string, ...extra: string[]): string[] {
  return ['--base-url', baseUrl, '--client-id', 'hostile-client', '-o', out, ...extra];
}

async function run(command: readonly string[]): Promise<CliResult & { seconds: number }> {
  const started = performance.now();
  const result = await runInProcess(command, { env: SECRET_ENV });
  return { ...result, seconds: (performance.now() - started) / 1000 };
}

/** The state as `status` and `--catch-up` read it: readable, and what it left pending. */
async function readableState(out: string): Promise<ImportState> {
  const state = await loadStateFile(join(out, STATE_FILE_NAME), { now: new Date(), metricNames: METRIC_NAMES });
  expect(state.warnings).toEqual([]);
  const status = await runInProcess(['status', '-o', out]);
  expect(status.stderr).not.toMatch(/fix or delete it/);
  expect([0, 8]).toContain(status.code);
  return state;
}

function errorLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => line.startsWith('error: '));
}

beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});

afterEach(async () => {
  process.off('warning', onWarning);
  expect(warnings.map((warning) => `${warning.name}: ${warning.message}`)).toEqual([]);
  await stopAllClis();
  await Promise.all(vendors.splice(0).map((started) => started.close()));
});

afterAll(async () => {
  await Promise.all(vendors.map((started) => started.close()));
});

describe('a wait from outside is capped (--max-wait 0.3 here)', () => {
  const spent = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' };
  it.each([
    ['X-RateLimit-Remaining: 0 with X-RateLimit-Reset: 86400 on every answer', 200, spent],
    ['RateLimit: r=0;t=86400 on every answer', 200, { ratelimit: '"default";r=0;t=86400' }],
    ['a spent budget whose reset is an epoch in 2100', 200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '4102444800' }],
    ['429 with Retry-After: 86400', 429, { 'retry-after': '86400' }],
    ['429 with Retry-After: 31536000 (past Node timer limit)', 429, { 'retry-after': '31536000' }],
    ['503 with Retry-After: 100000, every other request', 503, { 'retry-after': '100000' }],
  ] as const)('%s: one wait of the cap, then the run ends: exit 4, pending, in seconds', async (_name, status, headers) => {
    const crafted = await vendor((request, response) => {
      const failing = status === 503 ? request.n % 2 === 1 : status !== 200;
      if (failing) {
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end('{"detail":"not now"}');
        return;
      }
      answerPage(response, envelope([resultFor(request)]), status === 200 ? headers : {});
    });
    const out = await tempDir();
    const result = await run(['all', ...args(crafted.url, out, '--from', utcDay(4), '--to', utcDay(2), '--max-wait', '0.3')]);
    expect(result.code, result.stderr).toBe(4);
    // The message below proves the one 0.3 s wait; the bound rules out waiting what the vendor asks (a day or more).
    expect(result.seconds).toBeLessThan(10);
    expect(result.stderr).toMatch(/asks to wait [\d.]+ s, more than --max-wait 0\.3 s: waiting 0\.3 s; if it asks again, the run ends/);
    expect(errorLines(result).at(-1)).toMatch(
      /not attempted, left pending: the API is not serving this run: .* more than --max-wait 0\.3 s, again after waiting 0\.3 s; .*raise --max-wait$/,
    );
    // One wait of the cap for the whole run, not one per unit: a handful of requests.
    expect(crafted.requests.length).toBeLessThanOrEqual(6);
    const state = await readableState(out);
    expect(state.coverage('traffic').pending.length + state.coverage('unique-users').pending.length).toBeGreaterThanOrEqual(5);
  });

  it('a policy of 0 requests a window (RateLimit-Policy q=0;w=1) paces at one a second, and records a pace the state reads', async () => {
    const crafted = await vendor((request, response) =>
      answerPage(response, envelope([resultFor(request)]), { 'ratelimit-policy': '"default";q=0;w=1' }),
    );
    const out = await tempDir();
    const result = await run(['unique-users', ...args(crafted.url, out, '--date', utcDay(2))]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/1 request, pace 1\.0\/s/);
    expect(result.stderr).not.toMatch(/pace 0\.0\/s/);
    const state = await readableState(out);
    expect(state.lastRun()?.paceRps).toBeGreaterThan(0.9);
  });
});

describe('a unit has bounds of its own', () => {
  /** A vendor saying the day has `count` results, one a page, each page linking to the next one: it never ends. */
  const endlessPages = (count: number): Promise<CraftedVendor> =>
    vendor((request, response) => {
      const next = new URL(request.url);
      next.searchParams.set('page', String(request.n + 1));
      answerPage(response, envelope([resultFor(request, `S${request.n}`)], { count, next: next.href }));
    });

  it('a count of a billion, one result a page and next always set: exit 5 at the first page, one line', async () => {
    const crafted = await endlessPages(1_000_000_000);
    const out = await tempDir();
    const result = await run(['unique-users', ...args(crafted.url, out, '--date', utcDay(2))]);
    expect(result.code, result.stderr).toBe(5);
    expect(errorLines(result)[0]).toMatch(
      /unique-users \S+: the API says the day has 1000000000 results, more than a unit takes \(--max-results 1000000\)/,
    );
    expect(crafted.requests).toHaveLength(1);
    await readableState(out);
  });

  it('pages past what --max-results takes at --page-size: exit 6 at that page, not fetched again', async () => {
    const crafted = await endlessPages(40);
    const out = await tempDir();
    const result = await run(['unique-users', ...args(crafted.url, out, '--date', utcDay(2), '--max-results', '40', '--page-size', '10')]);
    expect(result.code, result.stderr).toBe(6);
    expect(errorLines(result)[0]).toMatch(
      /unique-users \S+ page 5: paging did not end within 4 pages, the most 40 results take at --page-size 10 \(--max-results\)/,
    );
    expect(crafted.requests).toHaveLength(4);
    await readableState(out);
  });

  it('a 200 whose JSON body never ends is cut at the page bound: exit 5 in seconds, memory flat (the built binary)', async () => {
    assertBuilt();
    let written = 0;
    const crafted = await vendor((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"count":1,"next":null,"previous":null,"results":[');
      const record = `${JSON.stringify(resultFor(request))},`.repeat(200);
      const more = (): void => {
        while (!response.destroyed) {
          written += record.length;
          if (!response.write(record)) break;
        }
        if (!response.destroyed) response.once('drain', more);
      };
      response.on('close', () => response.removeAllListeners('drain'));
      more();
    });
    const out = await tempDir();
    const report = await mkdtemp(join(tmpdir(), 'hostile-rss-'));
    try {
      const started = performance.now();
      const child = spawn(
        '/usr/bin/time',
        [
          '-f',
          '%M',
          '-o',
          join(report, 'rss'),
          process.execPath,
          BIN,
          'unique-users',
          ...args(crafted.url, out, '--date', utcDay(2), '--page-size', '100'),
        ],
        {
          env: { PATH: process.env.PATH, ...SECRET_ENV },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const seconds = (performance.now() - started) / 1000;
      expect(code, stderr).toBe(5);
      expect(seconds).toBeLessThan(10); // about 1 s: not a body read until the 30 s test timeout
      expect(stderr).toMatch(
        /page 1: GET \S+: the body is longer than 3342336 bytes, the most a page of 100 results takes \(--page-size\); the server is not sending the API's pages/,
      );
      expect(stderr).not.toMatch(/Warning/);
      expect(written).toBeGreaterThan(3_342_336);
      const peakKb = Number((await readFile(join(report, 'rss'), 'utf8')).trim().split('\n').at(-1));
      // A node process with the importer loaded is about 60-90 MB; the page's bound adds 3 MB.
      expect(peakKb).toBeLessThan(160_000);
    } finally {
      await rm(report, { recursive: true, force: true });
    }
    await readableState(out);
  });
});

describe('a vendor that accepts connections and never answers', () => {
  it('is down: a month of all ends in about twice --timeout plus a backoff, exit 4, every day pending', async () => {
    const crafted = await vendor(() => {
      // Never answered: the connection stays open until the client gives up.
    });
    const out = await tempDir();
    const result = await run(['all', ...args(crafted.url, out, '--from', utcDay(32), '--to', utcDay(2), '--timeout', '1')]);
    expect(result.code, result.stderr).toBe(4);
    // Two timeouts of 1 s and one backoff (under 0.5 s): the two requests prove the count, the bound that each waited
    // --timeout 1 and not the default 60 s.
    expect(result.seconds).toBeLessThan(10);
    expect(crafted.requests).toHaveLength(2);
    expect(errorLines(result).at(-1)).toMatch(
      /imported 0 of 93 units, .*2 requests; .*left pending: the API accepts connections but does not answer: timed out after 1 s \(--timeout\), and the next request too/,
    );
    const state = await readableState(out);
    expect(state.coverage('traffic').pending).toHaveLength(31);
  });
});

describe('smaller', () => {
  it('a rejected secret at --concurrency 4 is one request sent, and counted as one', async () => {
    const crafted = await vendor((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end('{"detail":"Invalid username/password."}');
    });
    const out = await tempDir();
    const result = await run(['all', ...args(crafted.url, out, '--from', utcDay(4), '--to', utcDay(2), '--concurrency', '4')]);
    expect(result.code, result.stderr).toBe(3);
    expect(crafted.requests).toHaveLength(1);
    expect(errorLines(result).at(-1)).toMatch(/, 1 request;/);
    const state = await readableState(out);
    expect(state.lastRun()).toMatchObject({ exitCode: 3, requests: 1 });
  });

  it.each([
    ['a NUL in a store code', { store_code: 'S\u0000' }, 'store_code "S\\u0000"'],
    ['a line break in a zone name', { values: [{ zone: 'A\nB', unique_users: 3 }] }, 'values[0].zone "A\\nB"'],
  ])('%s breaks the data contract: exit 5, or set aside with --on-invalid skip', async (_name, broken, shown) => {
    const crafted = await vendor((request, response) =>
      answerPage(response, envelope([resultFor(request, 'S2'), { ...resultFor(request, 'S3'), ...broken }])),
    );
    const out = await tempDir();
    const failed = await run(['unique-users', ...args(crafted.url, out, '--date', utcDay(2))]);
    expect(failed.code, failed.stderr).toBe(5);
    expect(errorLines(failed)[0]).toContain(`${shown} holds a control character (U+0000 to U+001F)`);
    const skipped = await run(['unique-users', ...args(crafted.url, out, '--date', utcDay(2), '--on-invalid', 'skip')]);
    expect(skipped.code, skipped.stderr).toBe(0);
    const data = await readFile(join(out, 'unique-users', `${utcDay(2)}.csv`), 'utf8');
    expect(data).toContain('S2');
    expect([...data].filter((character) => character < ' ' && character !== '\n')).toEqual([]);
    expect(data).not.toContain('A\nB');
    expect(await readFile(join(out, '_rejected', 'unique-users', `${utcDay(2)}.ndjson`), 'utf8')).toContain('control character');
    await readableState(out);
  });
});
