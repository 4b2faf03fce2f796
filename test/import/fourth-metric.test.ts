/**
 * A metric is one row: a fourth metric, made here as a test fixture, is one descriptor. The sandbox serves it and
 * the import writes its files and records its days, with nothing else added anywhere.
 */
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStores } from '../../src/destination/object-stores.js';
import { openDestination } from '../../src/destination/open.js';
import { importMetrics } from '../../src/import/import-run.js';
import { describeImport } from '../../src/import/invocation.js';
import { silentLogger } from '../../src/log/logger.js';
import { createImportProgress } from '../../src/log/progress.js';
import { DESCRIPTORS, type MetricDescriptor } from '../../src/metrics/descriptors.js';
import { resultSchema, uniqueUsersValue } from '../../src/metrics/schema.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { importConfigOf, NO_DATABASE } from '../helpers/import-config.js';
import { daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { loadExistingStateFile } from '../helpers/state-file.js';
import { useTempDirs } from '../helpers/tmp.js';
import { useSandbox } from '../helpers/vendor.js';

/** Visits that stayed past a threshold, per zone: a count like unique users, under its own name and key. */
const DWELL: MetricDescriptor = {
  name: 'dwell-count',
  resource: 'dwell-count',
  valueKey: 'dwell_count',
  schema: resultSchema('dwell_count', uniqueUsersValue),
  isValue: (raw) => Number.isSafeInteger(raw) && (raw as number) >= 0,
  columns: [{ name: 'dwell_count', csv: String, json: String, parquet: 'int64' }],
  total: {
    measure: 'sum of dwell_count',
    kind: 'sum',
    add: (sums, result) => {
      for (const entry of result.values) {
        const value = entry.dwell_count as number;
        sums.value += value;
        sums.weight += 1;
        if (value > 0) sums.nonZero += 1;
      }
    },
  },
  synthetic: {
    salt: 23,
    values: (hashes, size) => hashes.map((hash) => (hash >>> 5) % size),
    scaled: (raw, factor) => Math.round((raw as number) * factor),
  },
};

const CLOCK = noonToday();
const DAY = daysBefore(CLOCK)(2);
const SECRET = 'fourth-metric-secret';
const tempDir = useTempDirs('fourth-metric-');
const sandbox = useSandbox({ stores: 5, zones: 4, days: 4, clientSecret: SECRET, now: () => CLOCK, metrics: [...DESCRIPTORS, DWELL] });

describe('a fourth metric as a test fixture', () => {
  it('is one descriptor: the sandbox serves it and the import writes its rows and records its day', async () => {
    const out = await tempDir();
    const config = await importConfigOf(
      { baseUrl: sandbox.url, clientId: sandbox.clientId, clientSecret: SECRET, output: out, date: DAY },
      {},
      1,
    );
    const stores = new ObjectStores({ env: {}, forcePathStyle: false, retries: 0, timeoutMs: 1000, logger: silentLogger });
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const progress = await createImportProgress(quiet, { format: 'text', level: 'error' });
    const failed: number[] = [];
    await importMetrics([DWELL], config, describeImport(DWELL.name, config), {
      stdout: quiet,
      env: {},
      signal: new AbortController().signal,
      now: () => CLOCK,
      progress,
      redact: (text) => text,
      failed: (code) => failed.push(code),
      destination: openDestination(config.output.destination, { stores, stdout: quiet, database: NO_DATABASE }),
      stores,
    });
    expect(failed).toEqual([]);
    const served = sandbox.results(DWELL.name, { gte: `${DAY}T00:00:00Z`, lte: `${DAY}T23:59:59Z` }) as { values: unknown[] }[];
    const lines = (await readFile(join(out, 'dwell-count', `${DAY}.csv`), 'utf8')).trimEnd().split('\n');
    expect(lines[0]).toBe('store_code,date,day,granularity,zone,dwell_count');
    expect(lines).toHaveLength(1 + served.reduce((rows, result) => rows + result.values.length, 0));
    const state = await loadExistingStateFile(join(out, '.area-metrics-state.json'), {
      now: CLOCK,
      metricNames: [...DESCRIPTORS.map((metric) => metric.name), DWELL.name],
    });
    expect(state.coverage(DWELL.name).pending.map(({ day }) => day)).not.toContain(DAY);
    expect(state.lastCompleteDay(DWELL.name)).toBe(DAY);
  });

  it('is not served where the sandbox was not given it: a path outside the API, 404', async () => {
    const plain = await startSandbox({ stores: 2, zones: 2, days: 2, now: () => CLOCK });
    try {
      const response = await fetch(
        `${plain.url}/api/bi/area-metrics/dwell-count/?datetime_gte=${DAY}T00:00:00Z&datetime_lte=${DAY}T23:59:59Z`,
        {
          headers: { authorization: `Basic ${Buffer.from(`${plain.clientId}:${plain.clientSecret}`).toString('base64')}` },
        },
      );
      expect(response.status).toBe(404);
      expect(plain.requests.at(-1)).toMatchObject({ status: 404 });
    } finally {
      await plain.close();
    }
  });
});
