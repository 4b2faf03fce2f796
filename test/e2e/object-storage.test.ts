/**
 * `-o s3://bucket/prefix`: the BUILT binary against the sandbox, writing into s3rver (file-backed, on loopback)
 * behind a front server that enforces conditional writes and can refuse writes or go down on command.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult } from '../helpers/cli.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import {
  PROBE_ETAG,
  S3_ACCESS_KEY_ID,
  S3_SECRET_ACCESS_KEY,
  S3_SESSION_TOKEN,
  startS3,
  STATE_OBJECT_NAME,
  type S3Harness,
  resetS3,
} from '../helpers/s3.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { readTree, useTempDirs } from '../helpers/tmp.js';
import { SECRET_ENV, useSandbox, VENDOR_SECRET } from '../helpers/vendor.js';

let s3: S3Harness;
const tempDir = useTempDirs('object-storage-');

beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  await s3?.close();
});
beforeEach(() => {
  resetS3(s3);
});

/** One clock for the sandbox and every run: at noon (UTC) the day before yesterday is over and yesterday is not. */
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
const { runCli } = clockedCli(CLOCK, SECRET_ENV);
// This file is about where the data goes, not when a day ends: yesterday is served whole.
const sandbox = useSandbox({
  port: 0,
  stores: 4,
  zones: 3,
  days: 10,
  seed: 11,
  clientId: 'object-client',
  ...servingDaysInProgress(CLOCK),
});

const api = (): string[] => ['--base-url', sandbox.url, '--client-id', sandbox.clientId];

/**
 * A run with the store's env. With `inFolder` it is the BUILT binary in that working folder: what only a process
 * shows (no local state or temp file in the current folder; the SDK's notice about Node versions, left on here, kept
 * off stderr by the binary itself).
 */
async function run(
  args: readonly string[],
  extraEnv: Readonly<Record<string, string | undefined>> = {},
  inFolder?: string,
): Promise<CliResult> {
  const env = s3.env({ AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined, ...extraEnv });
  const result = await runCli([...args], { env, timeoutMs: 60_000, ...(inFolder === undefined ? {} : { cwd: inFolder, process: true }) });
  expectCleanStderr(result.stderr);
  return result;
}

/** No credential in any line, and every line is one of ours (no SDK notice, no stack trace). */
function expectCleanStderr(stderr: string): void {
  for (const secret of [S3_SECRET_ACCESS_KEY, S3_SESSION_TOKEN, S3_ACCESS_KEY_ID, VENDOR_SECRET]) expect(stderr).not.toContain(secret);
  expect(stderr).not.toMatch(/NodeVersionSupportWarning|AWS SDK for JavaScript|^\s+at /m);
}

async function stateOf(prefix: string): Promise<{ metrics: Record<string, { complete?: [string, string][] }> }> {
  const text = await s3.read(`${prefix}/${STATE_OBJECT_NAME}`);
  expect(text, `no state object under ${prefix}`).toBeDefined();
  return JSON.parse(text!.toString()) as never;
}

/** PUTs of data objects: not the state, not the run's manifest (`_runs/`) nor the coverage table, which every run writes. */
const dataPuts = (prefix: string) =>
  s3.requests.filter(
    (request) =>
      request.method === 'PUT' &&
      request.key.startsWith(`${prefix}/`) &&
      !request.key.endsWith(STATE_OBJECT_NAME) &&
      !request.key.startsWith(`${prefix}/_runs/`) &&
      !request.key.startsWith(`${prefix}/_coverage/`),
  );

describe('import into an S3-compatible bucket', () => {
  it('a 3-day `all` import equals the local-folder import object for object, each object one plain PUT', async () => {
    const from = daysAgo(4);
    const to = daysAgo(2);
    const local = await tempDir();
    const toFolder = await runCli(['all', ...api(), '--from', from, '--to', to, '-o', local], { timeoutMs: 60_000 });
    expect(toFolder.code, toFolder.stderr).toBe(0);
    const workingFolder = await tempDir();
    const toBucket = await run(['all', ...api(), '--from', from, '--to', to, '-o', `s3://${s3.bucket}/equal/nightly`], {}, workingFolder);
    expect(toBucket.code, toBucket.stderr).toBe(0);
    expect(toBucket.stderr).toContain(`output s3://${s3.bucket}/equal/nightly`);

    const files = await readTree(local);
    const objects = await s3.objects('equal/nightly');
    files.delete(STATE_OBJECT_NAME);
    objects.delete(STATE_OBJECT_NAME);
    expect([...objects.keys()]).toEqual([...files.keys()]);
    expect(objects.size).toBe(9);
    for (const [key, body] of files) expect(objects.get(key)?.equals(body), key).toBe(true);

    // Whole-object PUTs with a known length: nothing a store could keep as part of the object.
    for (const put of dataPuts('equal/nightly')) {
      expect(put.headers['content-encoding']).toBeUndefined();
      expect(put.headers['x-amz-content-sha256']).not.toMatch(/STREAMING/);
      expect(Number(put.headers['content-length'])).toBe(objects.get(put.key.slice('equal/nightly/'.length))?.length);
    }
    // The state beside the data records the days, as the folder's does.
    const state = await stateOf('equal/nightly');
    expect(Object.keys(state.metrics).sort()).toEqual(['avg-screen-time', 'traffic', 'unique-users']);
    // No local state or temp file was made in the working folder.
    expect(await readdir(workingFolder)).toEqual([]);
  });

  it('-f parquet puts the same Parquet files as a folder import', async () => {
    const day = daysAgo(3);
    const local = await tempDir();
    const toFolder = await runCli(['traffic', ...api(), '--date', day, '-o', local, '-f', 'parquet'], { timeoutMs: 60_000 });
    expect(toFolder.code, toFolder.stderr).toBe(0);
    const toBucket = await run(['traffic', ...api(), '--date', day, '-o', `s3://${s3.bucket}/parquet`, '-f', 'parquet']);
    expect(toBucket.code, toBucket.stderr).toBe(0);
    const file = (await readTree(local)).get(`traffic/${day}.parquet`);
    const object = (await s3.objects('parquet')).get(`traffic/${day}.parquet`);
    expect(file?.subarray(0, 4).toString()).toBe('PAR1');
    expect(object?.equals(file!)).toBe(true);
  });

  it('a re-run of the same days rewrites nothing', async () => {
    const args = ['traffic', ...api(), '--from', daysAgo(3), '--to', daysAgo(2), '-o', `s3://${s3.bucket}/rerun`];
    expect((await run(args)).code).toBe(0);
    const before = new Map(
      await Promise.all([daysAgo(3), daysAgo(2)].map(async (day) => [day, await s3.head(`rerun/traffic/${day}.csv`)] as const)),
    );
    s3.requests.length = 0;
    const again = await run([...args, '--log-format', 'json']);
    expect(again.code, again.stderr).toBe(0);
    expect(dataPuts('rerun')).toEqual([]);
    for (const [day, head] of before) expect(await s3.head(`rerun/traffic/${day}.csv`)).toEqual(head);
    const units = again.stderr
      .split('\n')
      .filter((line) => line.includes('"changed"'))
      .map((line) => JSON.parse(line) as { changed: boolean; path: string });
    expect(units.map((unit) => [unit.path, unit.changed])).toEqual([
      [`s3://${s3.bucket}/rerun/traffic/${daysAgo(3)}.csv`, false],
      [`s3://${s3.bucket}/rerun/traffic/${daysAgo(2)}.csv`, false],
    ]);
  });

  it('--catch-up and status work from the bucket alone, on a machine with no local state', async () => {
    const output = `s3://${s3.bucket}/fresh-machine`;
    expect((await run(['traffic', ...api(), '--from', daysAgo(5), '--to', daysAgo(4), '-o', output])).code).toBe(0);
    const catchUp = await run(['traffic', ...api(), '--catch-up', '-o', output]);
    expect(catchUp.code, catchUp.stderr).toBe(0);
    expect(catchUp.stderr).toMatch(/imported 3 of 3 units/);
    expect([...(await s3.objects('fresh-machine')).keys()]).toEqual([
      STATE_OBJECT_NAME,
      ...[5, 4, 3, 2, 1].map((n) => `traffic/${daysAgo(n)}.csv`),
    ]);
    s3.requests.length = 0;
    // Yesterday is imported but not over, so a day behind is as up to date as a metric can be.
    const status = await run(['status', '-o', output, '--json', '--max-behind', '1']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as {
      state: string;
      metrics: { key: string; lastCompleteDay: string; daysBehind: number; gapDays: number }[];
    };
    expect(report.state).toBe(`${output}/${STATE_OBJECT_NAME}`);
    expect(report.metrics).toEqual([expect.objectContaining({ key: 'traffic', lastCompleteDay: daysAgo(2), daysBehind: 1, gapDays: 0 })]);
    // Reading the state is all status does: no write, no listing.
    expect(s3.requests.filter((request) => request.method !== 'GET')).toEqual([]);
  });

  it('accept and reopen change the state object in the bucket', async () => {
    const output = `s3://${s3.bucket}/settle`;
    expect((await run(['traffic', ...api(), '--date', daysAgo(2), '-o', output])).code).toBe(0);
    const reopened = await run(['reopen', 'traffic', '--date', daysAgo(2), '-o', output]);
    expect(reopened.code, reopened.stderr).toBe(0);
    const status = await run(['status', '-o', output, '--json']);
    const report = JSON.parse(status.stdout) as { metrics: { pending: { day: string; reason: string }[] }[] };
    expect(report.metrics[0]?.pending).toEqual([expect.objectContaining({ day: daysAgo(2), reason: 'reopened' })]);
    const accepted = await run(['accept', 'traffic', '--date', daysAgo(3), '-o', output]);
    expect(accepted.code, accepted.stderr).toBe(0);
    const after = JSON.parse((await run(['status', '-o', output, '--json'])).stdout) as { metrics: { accepted: [string, string][] }[] };
    expect(after.metrics[0]?.accepted).toEqual([[daysAgo(3), daysAgo(3)]]);
  });

  it('a store that goes down mid-run: exit 4 naming the store, old objects and the state intact', async () => {
    const output = `s3://${s3.bucket}/down`;
    expect((await run(['traffic', ...api(), '--from', daysAgo(5), '--to', daysAgo(3), '-o', output])).code).toBe(0);
    const objectsBefore = await s3.objects('down');
    const stateBefore = await stateOf('down');
    s3.faults.downAfterDataPuts = 1;
    const result = await run(['traffic', ...api(), '--from', daysAgo(5), '--to', daysAgo(1), '-o', output, '--retries', '1']);
    s3.faults.down = false;
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(new RegExp(`s3://${s3.bucket}/down/.*unreachable or failing`));
    expect(result.stderr).toContain(s3.endpoint);
    const objectsAfter = await s3.objects('down');
    for (const day of [5, 4, 3].map(daysAgo))
      expect(objectsAfter.get(`traffic/${day}.csv`)?.equals(objectsBefore.get(`traffic/${day}.csv`)!)).toBe(true);
    // The day after the outage never reached the bucket, and the state never names it complete.
    expect(objectsAfter.has(`traffic/${daysAgo(1)}.csv`)).toBe(false);
    const stateAfter = await stateOf('down');
    expect(stateAfter.metrics.traffic?.complete).toEqual(stateBefore.metrics.traffic?.complete);
  });

  it('a store whose path freezes: exit 4 within the bound of --timeout and its retries, the units after it not tried', async () => {
    const output = `s3://${s3.bucket}/frozen`;
    expect((await run(['traffic', ...api(), '--from', daysAgo(5), '--to', daysAgo(3), '-o', output])).code).toBe(0);
    const stateBefore = await stateOf('frozen');
    // The path freezes for the data files: the state and the run's records still get through.
    s3.faults.frozen = /^frozen\/traffic\//;
    const started = Date.now();
    const result = await run([
      'traffic',
      ...api(),
      '--from',
      daysAgo(5),
      '--to',
      daysAgo(1),
      '-o',
      output,
      '--timeout',
      '1',
      '--retries',
      '1',
    ]);
    const seconds = (Date.now() - started) / 1000;
    s3.faults.frozen = undefined;
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(new RegExp(`s3://${s3.bucket}/frozen/.*unreachable or failing`));
    // Two attempts of a 1 s bound at the first unit, which stops the run (each unit after it would wait the same
    // way): about 3 s, and a busy machine's margin on top.
    expect(seconds, result.stderr).toBeLessThan(12);
    expect(result.stderr).toMatch(
      /imported 0 of 5 units, .*; 1 failed, first: traffic \S+; 4 not tried, the output could not be written\n$/,
    );
    expect((await stateOf('frozen')).metrics.traffic?.complete).toEqual(stateBefore.metrics.traffic?.complete);
  });

  it("access denied on write: exit 7, one line naming the bucket, the key and the store's code", async () => {
    const output = `s3://${s3.bucket}/denied`;
    s3.faults.denyWrites = true;
    const result = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', output]);
    expect(result.code, result.stderr).toBe(7);
    expect(result.stderr).toMatch(new RegExp(`cannot write s3://${s3.bucket}/denied/\\S+: the store refused: AccessDenied`));
    s3.faults.denyWrites = false;
    expect(await s3.objects('denied')).toEqual(new Map());
  });

  it('bad credentials are exit 3 before any download; a bucket that does not exist is exit 2', async () => {
    const before = sandbox.requests.length;
    const badKey = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', `s3://${s3.bucket}/creds`], {
      AWS_ACCESS_KEY_ID: 'AKIAWRONGWRONGWRONG1',
    });
    expect(badKey.code, badKey.stderr).toBe(3);
    expect(badKey.stderr).toContain('InvalidAccessKeyId');
    expect(badKey.stderr).not.toContain('AKIAWRONGWRONGWRONG1');
    const noBucket = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', 's3://no-such-bucket/x']);
    expect(noBucket.code, noBucket.stderr).toBe(2);
    expect(noBucket.stderr).toMatch(/s3:\/\/no-such-bucket\/x\/\.area-metrics-state\.json.*NoSuchBucket/);
    expect(sandbox.requests.length).toBe(before);
  });

  it('two overlapping runs both keep their days in the state (the second write is refused once, merged, written)', async () => {
    const output = `s3://${s3.bucket}/overlap`;
    // Both runs' state writes are held until both arrive, so both read the same version of the state first.
    s3.faults.gatherStatePuts = 2;
    const results = await Promise.all([
      run(['traffic', ...api(), '--from', daysAgo(6), '--to', daysAgo(5), '-o', output]),
      run(['traffic', ...api(), '--from', daysAgo(3), '--to', daysAgo(2), '-o', output]),
    ]);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect((await stateOf('overlap')).metrics.traffic?.complete).toEqual([
      [daysAgo(6), daysAgo(5)],
      [daysAgo(3), daysAgo(2)],
    ]);
    // A real collision, not the probe of the store: a read-merge-write was refused and done again.
    const refused = s3.requests.filter(
      (request) => request.key === `overlap/${STATE_OBJECT_NAME}` && request.status === 412 && request.headers['if-match'] !== PROBE_ETAG,
    );
    expect(refused.length).toBeGreaterThan(0);
  });

  it('a malformed s3:// URL or endpoint is a usage error before anything is sent', async () => {
    const badUrl = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', 's3://Bad_Bucket/x']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/not a bucket name/);
    const badEndpoint = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', `s3://${s3.bucket}/x`], {
      AWS_ENDPOINT_URL_S3: 'not a url',
    });
    expect(badEndpoint.code).toBe(2);
    expect(badEndpoint.stderr).toMatch(/AWS_ENDPOINT_URL_S3 .* is not a URL/);
    expect(s3.requests).toEqual([]);
  });

  it('--state s3://bucket/key keeps the state of a local folder in the bucket; status reads it from there', async () => {
    const folder = await tempDir();
    const state = `s3://${s3.bucket}/states/nightly.json`;
    const result = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', folder, '--state', state]);
    expect(result.code, result.stderr).toBe(0);
    // The data and the run's manifest; the state is in the bucket.
    expect((await readdir(folder)).sort()).toEqual(['_runs', 'traffic']);
    expect(JSON.parse((await s3.read('states/nightly.json'))!.toString())).toMatchObject({
      metrics: { traffic: { complete: [[daysAgo(2), daysAgo(2)]] } },
    });
    // The coverage table beside the state, wherever the state is: the day the run made complete.
    const table = join(await tempDir(), 'coverage.parquet');
    await writeFile(table, (await s3.read('states/_coverage/coverage.parquet'))!);
    const duck = await DuckDb.open();
    try {
      expect(await duck.rows(`SELECT metric, day::VARCHAR AS day, status FROM read_parquet(${sqlText(table)})`)).toEqual([
        { metric: 'traffic', day: daysAgo(2), status: 'complete' },
      ]);
    } finally {
      duck.close();
    }
    const status = await run(['status', '--state', state, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ state, metrics: [{ key: 'traffic', lastCompleteDay: daysAgo(2) }] });
  });

  it('--dry-run of named days touches no store', async () => {
    const result = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', `s3://${s3.bucket}/dry`, '--dry-run']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^GET http/);
    expect(s3.requests).toEqual([]);
  });

  it.each([
    [
      {
        status: 301,
        code: 'PermanentRedirect',
        message: 'The bucket you are attempting to access must be addressed using the specified endpoint.',
      },
      2,
      /PermanentRedirect.*set AWS_REGION to the bucket's region/,
    ],
    [
      { status: 400, code: 'ExpiredToken', message: 'The provided token has expired.' },
      3,
      /the store rejected the credentials: ExpiredToken .*renew/,
    ],
    [
      { status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
      4,
      /unreachable or failing \(SlowDown .*\) after 2 attempts/,
    ],
  ])('a store answering %j: exit %i, one line, before any download', async (answerAll, code, message) => {
    s3.faults.answerAll = answerAll;
    const before = sandbox.requests.length;
    const result = await run(['traffic', ...api(), '--date', daysAgo(2), '-o', `s3://${s3.bucket}/answers`, '--retries', '1']);
    expect(result.code, result.stderr).toBe(code);
    const errors = result.stderr.split('\n').filter((line) => /(^|Z )error: /.test(line));
    expect(errors).toEqual([expect.stringMatching(message)]);
    expect(errors[0]).toContain(`s3://${s3.bucket}/answers/${STATE_OBJECT_NAME}`);
    expect(sandbox.requests.length).toBe(before);
  });
});
