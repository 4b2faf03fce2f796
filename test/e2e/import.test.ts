import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { METRICS, type MetricName } from '../../src/metrics/descriptors.js';
import { clockedCli, noonToday } from '../helpers/sandbox-clock.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { referenceCsv, referenceNdjson, referenceRows, type ReferenceResult } from '../helpers/reference-rows.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

/** One clock for the days the tests name, the runs and the sandbox: a run across midnight UTC changes nothing. */
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK, SECRET_ENV);
const run = (args: string[], env: Record<string, string> = {}) => runCli(args, { env });
/** A folder under this file's working folder, for `-o`. */
const folder = (name: string) => join(workDir, name);

let workDir: string;
const auth = () => ['--base-url', sandbox.url, '--client-id', sandbox.clientId];
const utcDay = (offsetDays: number) => new Date(CLOCK.getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** What the sandbox itself holds for a UTC day, as the rows our files must contain, in our sort order. */
function expectedRows(metric: MetricName, day: string) {
  const results = sandbox.results(metric, { gte: `${day}T00:00:00Z`, lte: `${day}T23:59:59Z` }) as ReferenceResult[];
  return referenceRows(metric, results);
}

const sandbox = useSandbox({ stores: 9, zones: 5, days: 10, seed: 7, clientId: 'e2e-client', now: () => CLOCK });
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'import-e2e-'));
});
afterEach(async () => {
  for (const entry of await readdir(workDir)) await rm(join(workDir, entry), { recursive: true, force: true });
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('import commands against the sandbox', () => {
  it('to stdout without --state, a day left pending says what a state would do; the summary counts the warning lines', async () => {
    sandbox.setPublishing({ hidden: [{ day: utcDay(-2) }] });
    try {
      // The day before yesterday unpublished, yesterday not over at noon: two warnings, and no state to keep either.
      // The secret from the environment: a flag would add its own warning line (counted too).
      const api = ['--base-url', sandbox.url, '--client-id', sandbox.clientId];
      const env = SECRET_ENV;
      const stateless = await run(['traffic', ...api, '-o', '-', '--from', utcDay(-2), '--to', utcDay(-1)], env);
      expect(stateless.code, stateless.stderr).toBe(0);
      const warned = stateless.stderr.split('\n').filter((line) => line.startsWith('warn: '));
      expect(warned, stateless.stderr).toHaveLength(2);
      for (const line of warned) {
        expect(line).toContain('no state records it (-o - without --state): with --state <file>, the next --catch-up');
        expect(line).not.toMatch(/; the next --catch-up/);
      }
      expect(stateless.stderr).toMatch(/imported 2 of 2 units, .*, 2 warnings in /);
      // With a state, the next --catch-up is what comes; one warning is "1 warning".
      const stated = await run(['traffic', ...api, '-o', '-', '--state', folder('state.json'), '--date', utcDay(-1)], env);
      expect(stated.code, stated.stderr).toBe(0);
      expect(stated.stderr).toMatch(/^warn: .*: the next --catch-up imports it again$/m);
      expect(stated.stderr).toMatch(/imported 1 of 1 units, .*, 1 warning in /);
    } finally {
      sandbox.setPublishing({});
    }
  });

  it.each(METRIC_NAMES)('%s imports yesterday by default', async (metric) => {
    const before = sandbox.requests.length;
    const result = await run([metric, ...auth(), '-o', folder('area-metrics-data')]);
    expect(result.stderr).toMatch(/imported 1 of 1 units/);
    expect(result.code).toBe(0);
    const day = utcDay(-1);
    const metricRequests = sandbox.requests.slice(before).filter((request) => request.path.includes('/area-metrics/'));
    expect(metricRequests[0]?.query).toMatchObject({
      datetime_gte: `${day}T00:00:00Z`,
      datetime_lte: `${day}T23:59:59Z`,
      page_size: '1000',
    });
    const csv = await readFile(join(workDir, 'area-metrics-data', metric, `${day}.csv`), 'utf8');
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe(['store_code', 'date', 'day', 'granularity', 'zone', ...METRICS[metric].columns.map((c) => c.name)].join(','));
    expect(lines.length - 1).toBe(expectedRows(metric, day).length);
    // Byte for byte what csv-stringify writes for the plainly built rows (zone names with commas, quotes, non-ASCII).
    expect(csv).toBe(`${lines[0]}\n${referenceCsv(expectedRows(metric, day))}`);
  });

  it('without -o writes to area-metrics-data in the working folder, beside its state', async () => {
    // The default output folder is relative to the working folder: a process's.
    const result = await runCli(['traffic', ...auth()], { cwd: workDir, process: true });
    expect(result.code, result.stderr).toBe(0);
    const day = utcDay(-1);
    const csv = await readFile(join(workDir, 'area-metrics-data', 'traffic', `${day}.csv`), 'utf8');
    expect(csv).toBe(`${csv.split('\n')[0]}\n${referenceCsv(expectedRows('traffic', day))}`);
    expect(existsSync(join(workDir, 'area-metrics-data', '.area-metrics-state.json'))).toBe(true);
  });

  it('all: a 3-day backfill in pages of 7 matches the sandbox record for record', async () => {
    const days = [utcDay(-4), utcDay(-3), utcDay(-2)];
    const result = await run(
      importArgs(sandbox, 'all', folder('out'), '--from', days[0]!, '--to', days[2]!, '--page-size', '7', '-f', 'ndjson'),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/imported 9 of 9 units/);
    for (const metric of METRIC_NAMES) {
      for (const day of days) {
        const text = await readFile(join(workDir, 'out', metric, `${day}.ndjson`), 'utf8');
        expect(text).toBe(referenceNdjson(expectedRows(metric, day)));
        const lines = text.trimEnd().split('\n');
        const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
        const expected = expectedRows(metric, day).map((row) => row.json);
        expect(rows).toEqual(expected);
        expect(expected.length).toBeGreaterThan(9);
      }
    }
    // 9 stores in pages of 7: two pages per unit.
    const pageTwo = sandbox.requests.filter((request) => request.query.page === '2' && request.query.page_size === '7');
    expect(pageTwo.length).toBe(9);
  });

  it('-o - streams NDJSON that parses line by line, with no log lines mixed in', async () => {
    const result = await run(['traffic', ...auth(), '-o', '-', '--date', utcDay(-2)]);
    expect(result.code).toBe(0);
    const rows = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { metric: string; traffic_pct: number });
    expect(rows.length).toBe(expectedRows('traffic', utcDay(-2)).length);
    expect(rows.every((row) => row.metric === 'traffic' && typeof row.traffic_pct === 'number')).toBe(true);
    expect(result.stderr).toMatch(/imported 1 of 1 units/);
  });

  it('a single metric may stream CSV with exactly one header', async () => {
    const result = await run(['unique-users', ...auth(), '-o', '-', '-f', 'csv', '--from', utcDay(-3), '--to', utcDay(-2)]);
    expect(result.code).toBe(0);
    expect(result.stdout.match(/^store_code,/gm)).toHaveLength(1);
  });

  it('re-running the same window produces byte-identical files', async () => {
    const args = ['all', ...auth(), '--from', utcDay(-3), '--to', utcDay(-2), '--page-size', '4', '-o', folder('again')];
    expect((await run(args)).code).toBe(0);
    const first = await readFile(join(workDir, 'again', 'traffic', `${utcDay(-3)}.csv`));
    expect((await run([...args.slice(0, -2), '--concurrency', '1', '-o', folder('again')])).code).toBe(0);
    const second = await readFile(join(workDir, 'again', 'traffic', `${utcDay(-3)}.csv`));
    expect(second.equals(first)).toBe(true);
    const leftovers = (await readdir(join(workDir, 'again', 'traffic'))).filter((name) => name.endsWith('.tmp'));
    expect(leftovers).toEqual([]);
  });

  it('writes exactly the rows built the plain way from the sandbox data, in CSV and NDJSON, for every metric and day', async () => {
    const days = [utcDay(-3), utcDay(-2)];
    for (const format of ['csv', 'ndjson'] as const) {
      const result = await run(
        importArgs(sandbox, 'all', folder(format), '--from', days[0]!, '--to', days[1]!, '--page-size', '3', '-f', format),
      );
      expect(result.code, result.stderr).toBe(0);
      for (const metric of METRIC_NAMES) {
        for (const day of days) {
          const rows = expectedRows(metric, day);
          expect(rows.length).toBeGreaterThan(0);
          const written = await readFile(join(workDir, format, metric, `${day}.${format}`), 'utf8');
          const header = `${['store_code', 'date', 'day', 'granularity', 'zone', ...METRICS[metric].columns.map((column) => column.name)].join(',')}\n`;
          expect(written).toBe(format === 'csv' ? header + referenceCsv(rows) : referenceNdjson(rows));
        }
      }
    }
  });

  it('--store writes one file per store with only that store', async () => {
    const result = await run(['traffic', ...auth(), '--date', utcDay(-2), '--store', 'S002', '--store', 'S005', '-o', folder('stores')]);
    expect(result.code).toBe(0);
    const names = (await readdir(join(workDir, 'stores', 'traffic'))).sort();
    expect(names).toEqual([`${utcDay(-2)}.store-S002.csv`, `${utcDay(-2)}.store-S005.csv`]);
    const csv = await readFile(join(workDir, 'stores', 'traffic', names[0]!), 'utf8');
    expect(
      new Set(
        csv
          .trimEnd()
          .split('\n')
          .slice(1)
          .map((line) => line.split(',')[0]),
      ),
    ).toEqual(new Set(['S002']));
  });

  it('--shape results writes one line per API result', async () => {
    const result = await run(['avg-screen-time', ...auth(), '--date', utcDay(-2), '--shape', 'results', '-o', folder('shaped')]);
    expect(result.code).toBe(0);
    const lines = (await readFile(join(workDir, 'shaped', 'avg-screen-time', `${utcDay(-2)}.ndjson`), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(9);
    expect(JSON.parse(lines[0]!)).toMatchObject({ metric: 'avg-screen-time', store_code: 'S001', granularity: 'daily' });
  });

  it('reads base URL and credentials from the environment', async () => {
    const env = { AREA_METRICS_BASE_URL: sandbox.url, AREA_METRICS_CLIENT_ID: sandbox.clientId, ...SECRET_ENV };
    const result = await run(['unique-users', '-o', '-', '-q'], env);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.length).toBeGreaterThan(0);
  });

  it('--dry-run prints the requests without credentials and makes none', async () => {
    const before = sandbox.requests.length;
    const result = await run(['all', '--base-url', `${sandbox.url}/api/`, '--from', utcDay(-3), '--to', utcDay(-2), '--dry-run']);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(6);
    expect(result.stdout).toContain(`GET ${sandbox.url}/api/bi/area-metrics/unique-users/?datetime_gte=`);
    expect(sandbox.requests.length).toBe(before);
  });

  it('wrong credentials exit 3, write no file and never print the secret', async () => {
    const result = await run([
      'all',
      '--base-url',
      sandbox.url,
      '--client-id',
      sandbox.clientId,
      '--client-secret',
      'Wrong-Secret-999',
      '-v',
      '-o',
      folder('area-metrics-data'),
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/HTTP 401: credentials rejected/);
    expect(result.stderr).not.toContain('Wrong-Secret-999');
    expect(existsSync(join(workDir, 'area-metrics-data', 'unique-users'))).toBe(false);
  });

  it('usage errors exit 2 with one line and make no request', async () => {
    const before = sandbox.requests.length;
    for (const args of [
      ['traffic', ...auth(), '--date', '2026-02-30'],
      ['traffic', ...auth(), '--page-size', '20000'],
      ['traffic', ...auth(), '--from', '2026-11-05', '--to', '2026-11-01'],
      ['traffic', '--client-id', 'x', '--client-secret', 'y'],
      ['traffic', ...auth(), '--no-such-flag'],
    ]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trimEnd().split('\n'), result.stderr).toHaveLength(1);
    }
    expect(sandbox.requests.length).toBe(before);
  });

  it('--log-format json makes every stderr line a JSON object', async () => {
    const result = await run(['traffic', ...auth(), '--date', utcDay(-2), '--log-format', 'json', '-o', folder('json-logs')]);
    expect(result.code).toBe(0);
    const lines = result.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: expect.stringMatching(/^imported 1 of 1 units/) });
  });
});
