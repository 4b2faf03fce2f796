/**
 * Bad data: every way a body or a record can break the data contract, with `--on-invalid fail`
 * (exit 5, one line naming metric, day, store_code, field and value) and `skip` (exit 0, the record set aside in
 * `_rejected/`). A tiny loopback server serves crafted envelopes; the BUILT binary is what runs.
 */
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stopAllClis, type CliResult } from '../helpers/cli.js';
import { listenOnLoopback, type Listening } from '../helpers/loopback.js';
import { dataFiles, listFiles, useTempDirs } from '../helpers/tmp.js';
import { importArgs as vendorImport } from '../helpers/vendor.js';

const SECRET = 'Data-S3cret-c0ffee';
const DAY = '2026-03-10';
const DATE = `${DAY}T00:00:00-01:00`;

type Metric = 'unique-users' | 'avg-screen-time' | 'traffic';
type Entry = Record<string, unknown>;
type Result = { store_code?: unknown; date?: unknown; granularity?: unknown; values?: unknown };

const GOOD_VALUES: Record<Metric, Entry[]> = {
  'unique-users': [
    { zone: '[1] ENTRANCE', unique_users: 12 },
    { zone: 'Till, "B"', unique_users: 0 },
  ],
  'avg-screen-time': [
    { zone: '[1] ENTRANCE', avg_screen_time: '00:01:05' },
    { zone: 'Till, "B"', avg_screen_time: '12:00:59' },
  ],
  traffic: [
    { zone: '[1] ENTRANCE', traffic_pct: '0.40000' },
    { zone: 'Till, "B"', traffic_pct: '0.60000' },
  ],
};

function good(metric: Metric, storeCode: string): Result {
  return { store_code: storeCode, date: DATE, granularity: 'daily', values: GOOD_VALUES[metric] };
}

function envelope(results: readonly Result[]): string {
  return JSON.stringify({ count: results.length, next: null, previous: null, results });
}

/** Body served at `/<case>/api/bi/area-metrics/<metric>/`: S1 and S3 are good, S2 is the bad one. */
function withBadS2(metric: Metric, bad: Partial<Result>): string {
  return envelope([good(metric, 'S3'), { ...good(metric, 'S2'), ...bad }, good(metric, 'S1')]);
}

interface RecordCase {
  readonly name: string;
  readonly metric: Metric;
  readonly bad: Partial<Result>;
  readonly field: string;
  /** The bad value as the error line shows it. */
  readonly shown: string;
}

const RECORD_CASES: readonly RecordCase[] = [
  {
    name: 'negative-users',
    metric: 'unique-users',
    bad: { values: [{ zone: 'A', unique_users: -1 }] },
    field: 'values[0].unique_users',
    shown: '-1',
  },
  {
    name: 'screen-time-75-minutes',
    metric: 'avg-screen-time',
    bad: { values: [{ zone: 'A', avg_screen_time: '1:75:00' }] },
    field: 'values[0].avg_screen_time',
    shown: '"1:75:00"',
  },
  {
    name: 'traffic-abc',
    metric: 'traffic',
    bad: {
      values: [
        { zone: 'A', traffic_pct: '0.5' },
        { zone: 'B', traffic_pct: 'abc' },
      ],
    },
    field: 'values[1].traffic_pct',
    shown: '"abc"',
  },
  { name: 'missing-zone', metric: 'unique-users', bad: { values: [{ unique_users: 4 }] }, field: 'values[0].zone', shown: 'is missing' },
  { name: 'hourly', metric: 'traffic', bad: { granularity: 'hourly' }, field: 'granularity', shown: '"hourly"' },
  { name: 'date-without-offset', metric: 'avg-screen-time', bad: { date: `${DAY}T00:00:00` }, field: 'date', shown: `"${DAY}T00:00:00"` },
  // Checked against the request: the day asked for is DAY, this result is five days later.
  {
    name: 'outside-window',
    metric: 'unique-users',
    bad: { date: '2026-03-15T00:00:00-01:00' },
    field: 'date',
    shown: '"2026-03-15T00:00:00-01:00"',
  },
  {
    name: 'zone-twice',
    metric: 'unique-users',
    bad: {
      values: [
        { zone: 'A', unique_users: 1 },
        { zone: 'A', unique_users: 9 },
      ],
    },
    field: 'values[1].zone',
    shown: '"A"',
  },
  {
    name: 'lone-surrogate',
    metric: 'unique-users',
    bad: { values: [{ zone: '\ud800', unique_users: 1 }] },
    field: 'values[0].zone',
    shown: '"\\ud800"',
  },
  { name: 'offset-99', metric: 'traffic', bad: { date: `${DAY}T00:00:00+99:00` }, field: 'date', shown: `"${DAY}T00:00:00+99:00"` },
  { name: 'offset-23-59', metric: 'traffic', bad: { date: `${DAY}T00:00:00+23:59` }, field: 'date', shown: `"${DAY}T00:00:00+23:59"` },
  { name: 'hour-24', metric: 'traffic', bad: { date: `${DAY}T24:00:00Z` }, field: 'date', shown: `"${DAY}T24:00:00Z"` },
  {
    name: 'screen-time-huge',
    metric: 'avg-screen-time',
    bad: { values: [{ zone: 'A', avg_screen_time: '99999999999999999999:00:00' }] },
    field: 'values[0].avg_screen_time',
    shown: '"99999999999999999999:00:00"',
  },
];

/** A value nested 5,000 arrays deep: more than JSON.stringify's stack allows. */
const DEEP = `${'['.repeat(5000)}${']'.repeat(5000)}`;
const deepRecord = (key: string) =>
  `{"store_code":"S1","date":"${DATE}","granularity":"daily","values":[{"zone":"A","unique_users":${key === 'value' ? DEEP : '1'}}]${key === 'extra' ? `,"extra":${DEEP}` : ''}}`;

const BODIES = new Map<string, string | Buffer>([
  // Café in Latin-1 (0xE9 alone is not UTF-8): not the API's text, whatever a lenient decoder would make of it.
  ['latin1', Buffer.from(envelope([{ ...good('unique-users', 'S1'), values: [{ zone: 'Café', unique_users: 1 }] }]), 'latin1')],
  ['deep-value', `{"count":1,"next":null,"previous":null,"results":[${deepRecord('value')}]}`],
  ['deep-extra', `{"count":1,"next":null,"previous":null,"results":[${deepRecord('extra')}]}`],
  // One store and instant, spelled two ways (DATE is 01:00 UTC).
  ['same-instant', envelope([good('unique-users', 'S1'), { ...good('unique-users', 'S1'), date: `${DAY}T01:00:00Z` }])],
  // Two broken records alike (store_code null, one date) and a good one.
  [
    'null-stores',
    envelope([
      { ...good('unique-users', 'S1'), store_code: null },
      { ...good('unique-users', 'S1'), store_code: null },
      good('unique-users', 'S2'),
    ]),
  ],
  ['malformed', '{"count": 3, "next": null, "results": [{"store_code": "S1"'],
  ['no-results', JSON.stringify({ count: 3, next: null, previous: null })],
  // 0.4 + 0.4 is 0.2 short of 1: worth a warning; 3 x 0.33333 is rounding: not.
  [
    'traffic-sum',
    envelope([
      {
        ...good('traffic', 'S1'),
        values: [
          { zone: 'A', traffic_pct: '0.40000' },
          { zone: 'B', traffic_pct: '0.40000' },
        ],
      },
      {
        ...good('traffic', 'S2'),
        values: [
          { zone: 'A', traffic_pct: '0.33333' },
          { zone: 'B', traffic_pct: '0.33333' },
          { zone: 'C', traffic_pct: '0.33333' },
        ],
      },
    ]),
  ],
  [
    'short-count',
    JSON.stringify({ count: 5, next: null, previous: null, results: [good('unique-users', 'S1'), good('unique-users', 'S2')] }),
  ],
  ['clean-users', envelope([good('unique-users', 'S3'), good('unique-users', 'S1')])],
  ...RECORD_CASES.map((c): [string, string] => [c.name, withBadS2(c.metric, c.bad)]),
]);

/** `--on-invalid skip` on a case with one bad record (S2) and two good ones (S1, S3). */
async function expectSkipped(bad: RecordCase, out: string, result: CliResult): Promise<void> {
  expect(result.code, result.stderr).toBe(0);
  expect(await listFiles(out)).toEqual(['.area-metrics-state.json', `_rejected/${bad.metric}/${DAY}.ndjson`, `${bad.metric}/${DAY}.csv`]);
  const csv = (await readFile(join(out, bad.metric, `${DAY}.csv`), 'utf8')).trimEnd().split('\n');
  // Header + 2 zones for each of S1 and S3, sorted by store_code; nothing of S2.
  expect(csv).toHaveLength(5);
  expect(csv.slice(1).map((row) => row.split(',')[0])).toEqual(['S1', 'S1', 'S3', 'S3']);

  const rejected = (await readFile(join(out, '_rejected', bad.metric, `${DAY}.ndjson`), 'utf8')).trimEnd().split('\n');
  expect(rejected).toHaveLength(1);
  const entry = JSON.parse(rejected[0]!) as { metric: string; day: string; field: string; reason: string; record: Result };
  expect(entry).toMatchObject({ metric: bad.metric, day: DAY, field: bad.field });
  expect(entry.reason.length).toBeGreaterThan(0);
  expect(entry.record.store_code).toBe('S2');

  // The warning names the record and the value too: with -o - it is all that is kept of the record.
  const warning = result.stderr.split('\n').find((line) => line.startsWith('warn:') && line.includes('rejected record')) ?? '';
  expect(warning).toContain(`${bad.metric} ${DAY}`);
  expect(warning).toContain('store_code "S2"');
  expect(warning).toContain(`${bad.field} ${bad.shown}`);
  expect(result.stderr).toMatch(/imported 1 of 1 units, 4 rows, 1 rejected records/);
  expect(errorLines(result.stderr)).toEqual([]);
}

let listening: Listening | undefined;
let baseUrl = '';
const calls: string[] = [];
const tempDir = useTempDirs('reliability-data-');

function importArgs(metric: Metric, caseName: string, out: string, ...extra: string[]): string[] {
  const vendor = { url: `${baseUrl}/${caseName}`, clientId: 'data-client' };
  return vendorImport(vendor, metric, out, '--client-secret', SECRET, '--date', DAY, '--retries', '1', ...extra);
}

/** Requests the server received for one case (tests run concurrently, each on its own case). */
function callsFor(caseName: string): number {
  return calls.filter((name) => name === caseName).length;
}

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('error:'));
}

/** How an import of a case fails as a whole: its exit code after how many requests (the retries its kind earns). */
interface Failure {
  readonly metric?: Metric;
  readonly extra?: readonly string[];
  readonly code: number;
  readonly requests: number;
}

/** Imports `caseName` into `out`, which must fail as `failure` says and write no file; its error lines. */
async function failedImport(
  caseName: string,
  out: string,
  { metric = 'unique-users', extra = [], code, requests }: Failure,
): Promise<string[]> {
  const before = callsFor(caseName);
  const result = await runCli(importArgs(metric, caseName, out, ...extra));
  expect(result.code, result.stderr).toBe(code);
  expect(callsFor(caseName) - before).toBe(requests);
  expect(await dataFiles(out)).toEqual([]);
  return errorLines(result.stderr);
}

beforeAll(async () => {
  const server = createServer((request, response) => {
    const caseName = new URL(request.url ?? '/', 'http://x').pathname.split('/')[1] ?? '';
    calls.push(caseName);
    // A `next` link that points back at the page itself: a pager that trusted it would never stop.
    const self = `http://${request.headers.host}${request.url}`;
    const body =
      caseName === 'next-loop'
        ? JSON.stringify({ count: 2, next: self, previous: null, results: [good('unique-users', 'S1')] })
        : BODIES.get(caseName);
    response.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'application/json' });
    response.end(body ?? '{"detail":"Not found."}');
  });
  listening = await listenOnLoopback(server);
  baseUrl = listening.url;
});

afterAll(async () => {
  await stopAllClis();
  await listening?.close();
});

describe.concurrent('a body that is not an envelope', () => {
  it.for([
    ['malformed', /not valid JSON/],
    ['no-results', /not a paginated envelope: results/],
  ] as const)(
    '%s: retried, then exit 5 with one line naming the unit; no file, even with --on-invalid skip',
    async ([caseName, reason], context) => {
      for (const mode of ['fail', 'skip']) {
        const out = await tempDir(context);
        const [line, summary, ...more] = await failedImport(caseName, out, { extra: ['--on-invalid', mode], code: 5, requests: 2 });
        expect(more).toEqual([]);
        expect(line).toContain(`unique-users ${DAY}`);
        expect(line).toMatch(reason);
        expect(line).toMatch(/after 2 attempts/);
        expect(summary).toMatch(/imported 0 of 1 units/);
      }
    },
  );
});

describe.concurrent('a body that is not text, or too deep to handle', () => {
  it('a Latin-1 body is malformed: retried, then exit 5, and nothing written (no U+FFFD in a file)', async (context) => {
    const errors = await failedImport('latin1', await tempDir(context), { code: 5, requests: 2 });
    expect(errors[0]).toMatch(/not UTF-8 text/);
  });

  it('a value nested 5,000 deep ends the unit with exit 5 in time, fail or skip', async (context) => {
    const out = await tempDir(context);
    const result = await runCli(importArgs('unique-users', 'deep-value', out, '--timeout', '10'), { timeoutMs: 15_000 });
    expect(result.code, result.stderr).toBe(5);
    expect(errorLines(result.stderr)[0]).toContain('values[0].unique_users (a value nested too deeply to show)');
    const skipped = await runCli(importArgs('unique-users', 'deep-value', out, '--on-invalid', 'skip'), { timeoutMs: 15_000 });
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(await readFile(join(out, '_rejected', 'unique-users', `${DAY}.ndjson`), 'utf8')).toContain('nested too deeply');
  });

  it('a valid record with a field nested too deep to write, with --shape results: exit 5, not a crash', async (context) => {
    const out = await tempDir(context);
    const result = await runCli(importArgs('unique-users', 'deep-extra', out, '--shape', 'results'), { timeoutMs: 15_000 });
    expect(result.code, result.stderr).toBe(5);
    expect(errorLines(result.stderr)[0]).toMatch(/nested too deeply to write/);
    expect(result.stderr).not.toMatch(/RangeError|call stack/);
  });
});

describe.concurrent('repeats', () => {
  it('one store and instant spelled twice is a repeat: fetched 3 times, then exit 6', async (context) => {
    const errors = await failedImport('same-instant', await tempDir(context), { code: 6, requests: 3 });
    expect(errors[0]).toMatch(/1 repeated/);
  });

  it('records set aside are not repeats: two alike broken records and a good one give exit 0 and the good one written', async (context) => {
    const out = await tempDir(context);
    const result = await runCli(importArgs('unique-users', 'null-stores', out, '--on-invalid', 'skip'));
    expect(result.code, result.stderr).toBe(0);
    const csv = (await readFile(join(out, 'unique-users', `${DAY}.csv`), 'utf8')).trimEnd().split('\n');
    expect(csv.slice(1).map((row) => row.split(',')[0])).toEqual(['S2', 'S2']);
    expect((await readFile(join(out, '_rejected', 'unique-users', `${DAY}.ndjson`), 'utf8')).trimEnd().split('\n')).toHaveLength(2);
  });
});

describe.concurrent('a record that breaks the data contract', () => {
  it.for(RECORD_CASES)(
    '$name: exit 5 and one line naming metric, day, store_code, field and value; with --on-invalid skip exit 0 and the record in _rejected/',
    async (bad, context) => {
      const out = await tempDir(context);
      // Contract violations are not transient: one request, not retried.
      const errors = await failedImport(bad.name, out, { metric: bad.metric, code: 5, requests: 1 });
      const lines = errors.filter((line) => !line.includes('imported 0 of 1 units'));
      expect(lines).toHaveLength(1);
      const line = lines[0]!;
      expect(line).toContain(`${bad.metric} ${DAY}`);
      expect(line).toContain('store_code "S2"');
      expect(line).toContain(`${bad.field} ${bad.shown}`);
      expect(line).toMatch(/--on-invalid skip/);

      const skipped = await runCli(importArgs(bad.metric, bad.name, out, '--on-invalid', 'skip'));
      await expectSkipped(bad, out, skipped);
    },
  );

  it('a clean re-run removes what an earlier run set aside, and writes the same rows', async (context) => {
    const out = await tempDir(context);
    expect((await runCli(importArgs('unique-users', 'negative-users', out, '--on-invalid', 'skip'))).code).toBe(0);
    expect(await listFiles(out)).toContain(`_rejected/unique-users/${DAY}.ndjson`);
    const skipped = await readFile(join(out, 'unique-users', `${DAY}.csv`));
    const clean = await runCli(importArgs('unique-users', 'clean-users', out));
    expect(clean.code, clean.stderr).toBe(0);
    expect(await listFiles(out)).toEqual(['.area-metrics-state.json', `unique-users/${DAY}.csv`]);
    expect(await readFile(join(out, 'unique-users', `${DAY}.csv`))).toEqual(skipped);
  });
});

describe.concurrent('paging that cannot be complete', () => {
  it('fewer results than count: fetched 3 times, then exit 6 with expected and received', async (context) => {
    const errors = await failedImport('short-count', await tempDir(context), { code: 6, requests: 3 });
    const line = errors.find((text) => text.includes('incomplete')) ?? '';
    expect(line).toContain(`unique-users ${DAY}`);
    expect(line).toMatch(/expected 5 results, received 2/);
  });

  it('a next link that loops is cut short, counted as incomplete (exit 6), never followed forever', async (context) => {
    // Per fetch: page 1, then its own link again is refused without a request; 3 fetches.
    const errors = await failedImport('next-loop', await tempDir(context), { code: 6, requests: 3 });
    expect(errors.join('\n')).toMatch(new RegExp(`unique-users ${DAY}: incomplete`));
  });
});

describe.concurrent('traffic that does not sum to 1', () => {
  it('is a warning, not a failure; rounding within 0.00001 per zone is not even that', async (context) => {
    const out = await tempDir(context);
    const result = await runCli(importArgs('traffic', 'traffic-sum', out));
    expect(result.code, result.stderr).toBe(0);
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith(`warn: traffic ${DAY}`));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`traffic ${DAY}: store S1 .*sum to 0\\.80000`));
    // The summary counts every warning line the run wrote: the secret flag's and the sum's.
    expect(result.stderr).toMatch(/imported 1 of 1 units, 5 rows, 2 warnings/);
    const csv = (await readFile(join(out, 'traffic', `${DAY}.csv`), 'utf8')).trimEnd().split('\n');
    expect(csv).toHaveLength(6);
    expect(await listFiles(out)).not.toContain(`_rejected/traffic/${DAY}.ndjson`);
  });
});
