/**
 * Secrets: across every failure path of the import (and a success), with `-v` in text and JSON logs, the
 * client secret (and the Basic header that carries it) appears nowhere in stdout, stderr or any file written.
 */
import { createServer } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxFaults } from '../../src/sandbox/index.js';
import { stopAllClis, waitUntil, type CliResult } from '../helpers/cli.js';
import { clockedCli, daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { listenOnLoopback, type Listening } from '../helpers/loopback.js';
import { listFiles, readTree, useTempDirs } from '../helpers/tmp.js';
import { importArgs } from '../helpers/vendor.js';

const CLIENT_ID = 'secrets-client';
const SECRET = 'Pq7-Zeta-S3cret-9a1f';
const WRONG_SECRET = 'Wr0ng-Zeta-S3cret-55e2';
// The day before yesterday: every store's local day in its UTC window has ended, so the sandbox serves all of it.
/** One clock for the days the tests name, the runs and the sandbox: a run across midnight UTC changes nothing. */
const CLOCK = noonToday();
const { runCli, startInProcess } = clockedCli(CLOCK);
const DAY = daysBefore(CLOCK)(2);

/** Every form a leaked secret could take: as is, URL-encoded, and inside the Basic header. */
function forbidden(secret: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    Buffer.from(`${CLIENT_ID}:${secret}`).toString('base64'),
    Buffer.from(secret).toString('base64'),
  ];
}

let sandbox: Sandbox;
let badData: Listening | undefined;
let badDataUrl = '';
const tempDir = useTempDirs('reliability-secrets-');

async function expectNoLeak(result: CliResult, out: string, secrets: readonly string[] = [SECRET]): Promise<void> {
  const files = await readTree(out);
  for (const secret of secrets) {
    for (const form of forbidden(secret)) {
      expect(result.stdout, 'stdout').not.toContain(form);
      expect(result.stderr, 'stderr').not.toContain(form);
      for (const [path, bytes] of files) expect(bytes.toString('utf8'), path).not.toContain(form);
    }
  }
}

interface Scenario {
  readonly name: string;
  readonly faults?: SandboxFaults;
  /** Base URL; default the sandbox. */
  readonly base?: () => string;
  readonly args?: readonly string[];
  readonly code: number;
}

/** Faults here are persistent (not "the Nth request"), so the text and JSON runs of a scenario can share its sandbox. */
const SCENARIOS: readonly Scenario[] = [
  { name: 'success', args: ['--page-size', '2'], code: 0 },
  { name: 'success to stdout', args: ['-o', '-'], code: 0 },
  { name: '503 until retries run out', faults: { failNth: { n: 1, status: 503, times: 1000 } }, code: 4 },
  { name: '429 with Retry-After until retries run out', faults: { rateLimitNth: { n: 1, retryAfterSeconds: 0, times: 1000 } }, code: 4 },
  { name: 'timeout', faults: { latencyMs: 1500 }, args: ['--timeout', '1'], code: 4 },
  { name: 'connection refused', base: () => 'http://127.0.0.1:1', code: 4 },
  { name: 'incomplete after refetching', faults: { repeatResult: true }, args: ['--page-size', '2'], code: 6 },
  { name: 'malformed body', faults: { truncateNth: { n: 1, times: 1000 } }, code: 5 },
  { name: 'foreign next origin', faults: { foreignNextOrigin: 'http://127.0.0.1:1' }, args: ['--page-size', '2'], code: 0 },
  { name: 'invalid record', base: () => badDataUrl, code: 5 },
  { name: 'invalid record skipped', base: () => badDataUrl, args: ['--on-invalid', 'skip'], code: 0 },
  { name: 'usage error', args: ['--page-size', '20000'], code: 2 },
];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, stores: 3, zones: 2, days: 3, clientId: CLIENT_ID, clientSecret: SECRET, now: () => CLOCK });
  const badDataServer = createServer((_request, response) => {
    const record = (storeCode: string, users: number): unknown => ({
      store_code: storeCode,
      date: `${DAY}T00:00:00Z`,
      granularity: 'daily',
      values: [{ zone: 'A', unique_users: users }],
    });
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify({ count: 2, next: null, previous: null, results: [record('S1', 1), record('S2', -1)] }));
  });
  badData = await listenOnLoopback(badDataServer);
  badDataUrl = badData.url;
});

afterEach(() => {
  sandbox.setFaults({});
});

afterAll(async () => {
  // Not after each test: the scenarios run concurrently, and one finishing must not kill another's child.
  await stopAllClis();
  await sandbox?.close();
  await badData?.close();
});

/** A day of unique users with the secret as a flag: here the flag is where a leak would come from. */
function withSecretFlag(url: string, out: string, ...extra: string[]): string[] {
  return importArgs({ url, clientId: CLIENT_ID }, 'unique-users', out, '--client-secret', SECRET, ...extra);
}

describe.concurrent('the client secret never leaks on any path', () => {
  it.for(SCENARIOS)('$name: exit $code, in text and JSON logs with -v', async (scenario, context) => {
    // A sandbox of its own, so the scenarios can run at once.
    const own = await startSandbox({
      port: 0,
      stores: 3,
      zones: 2,
      days: 3,
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      faults: scenario.faults ?? {},
      now: () => CLOCK,
    });
    context.onTestFinished(() => own.close());
    const runs = await Promise.all(
      (['text', 'json'] as const).map(async (format) => {
        const out = await tempDir(context);
        const args = withSecretFlag(scenario.base?.() ?? own.url, out, '--date', DAY, '--retries', '1', '-v', '--log-format', format);
        args.push(...(scenario.args ?? []));
        return { format, out, result: await runCli(args) };
      }),
    );
    for (const { format, out, result } of runs) {
      expect(result.code, `${format}: ${result.stderr}`).toBe(scenario.code);
      expect(result.stderr.length).toBeGreaterThan(0);
      if (format === 'json') {
        for (const line of result.stderr.trimEnd().split('\n')) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
      }
      await expectNoLeak(result, out);
    }
  });
});

describe('the client secret never leaks', () => {
  it('401 with a wrong secret: neither the wrong nor the right secret is shown', async () => {
    const out = await tempDir();
    const vendor = { url: sandbox.url, clientId: CLIENT_ID };
    const result = await runCli(importArgs(vendor, 'all', out, '--client-secret', WRONG_SECRET, '--date', DAY, '-v'));
    expect(result.code).toBe(3);
    await expectNoLeak(result, out, [WRONG_SECRET, SECRET]);
  });

  it('secret from AREA_METRICS_CLIENT_SECRET or from a file, failing and succeeding', async () => {
    const dir = await tempDir();
    const secretFile = join(dir, 'secret');
    await writeFile(secretFile, `${SECRET}\n`);
    const out = await tempDir();
    const fromEnv = await runCli(['traffic', '--date', DAY, '-o', out, '-v'], {
      env: { AREA_METRICS_BASE_URL: sandbox.url, AREA_METRICS_CLIENT_ID: CLIENT_ID, AREA_METRICS_CLIENT_SECRET: SECRET },
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    await expectNoLeak(fromEnv, out);
    sandbox.setFaults({ failNth: { n: 1, status: 500, times: 1000 } });
    const fromFile = await runCli(['traffic', '--date', DAY, '-o', out, '-v', '--retries', '0', '--log-format', 'json'], {
      env: { AREA_METRICS_BASE_URL: sandbox.url, AREA_METRICS_CLIENT_ID: CLIENT_ID, AREA_METRICS_CLIENT_SECRET_FILE: secretFile },
    });
    expect(fromFile.code).toBe(4);
    await expectNoLeak(fromFile, out);
    // --dry-run prints the requests: no credentials in them.
    const dryRun = await runCli([
      'all',
      '--base-url',
      sandbox.url,
      '--client-id',
      CLIENT_ID,
      '--client-secret',
      SECRET,
      '--date',
      DAY,
      '--dry-run',
    ]);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toMatch(/^GET http/m);
    await expectNoLeak(dryRun, out);
  });

  // In this process: the signal becomes an abort as at the process edge (its own handlers are reliability-files's).
  it.each(['SIGINT', 'SIGTERM'] as const)('interrupted by %s', async (signal) => {
    const out = await tempDir();
    sandbox.setFaults({ latencyMs: 300 });
    const run = startInProcess(withSecretFlag(sandbox.url, out, '--from', DAY, '--to', DAY, '-v', '--page-size', '1'));
    await waitUntil(() => run.stderr().includes('page 1'), 'the first page');
    run.kill(signal);
    const result = await run.done;
    expect(result.code).toBe(signal === 'SIGINT' ? 130 : 143);
    await expectNoLeak(result, out);
    expect((await listFiles(out)).filter((path) => path.endsWith('.tmp'))).toEqual([]);
  });
});
