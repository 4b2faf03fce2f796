import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../../src/fetch/http-client.js';
import { METRICS, type MetricName } from '../../src/metrics/descriptors.js';
import { fetchUnit, type UnitFetchOptions } from '../../src/metrics/unit.js';
import type { OutputFormat } from '../../src/output/format.js';
import { referenceCsv, referenceNdjson, referenceRows, resultOfZones } from '../helpers/reference-rows.js';
import { virtualClock } from '../helpers/clock.js';
import { useNock } from '../helpers/nock.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

// fetchUnit encodes each result as its page arrives and sorts the results at the end; that must give exactly the bytes
// of keeping every row of the unit, sorting them all by (store_code, date, zone) and encoding them at once.
const ORIGIN = 'https://vendor.example.test';
const windowQuery = { datetime_gte: '2026-11-20T00:00:00Z', datetime_lte: '2026-11-20T23:59:59Z' };
const ZONES = ['Zb', '[2] CHECKOUT, TILLS 1-6', 'Café "Central"', 'two\u2028lines', 'Za', '食品売り場', 'Z a'];

/** A result of every zone at noon at `offset`; all the traffic in the first zone. */
const result = (metric: MetricName, store: string, offset: string) =>
  resultOfZones(metric, store, `2026-11-20T12:00:00${offset}`, ZONES, (place) => (place === 0 ? '1.00000' : '0.00000'));

// Unsorted on purpose: stores out of order, one store twice with different offsets, and a store code that is a
// prefix of another.
const RESULTS: [string, string][] = [
  ['S10', '+02:00'],
  ['S1', '-05:00'],
  ['S2', 'Z'],
  ['S1', '+05:30'],
  ['S02', '+00:00'],
];

function serve(metric: MetricName): void {
  const path = `/api/bi/area-metrics/${metric}/`;
  const link = (page: number) =>
    `${ORIGIN}${path}?${new URLSearchParams({ ...windowQuery, page: String(page), page_size: '3' }).toString()}`;
  const all = RESULTS.map(([store, offset]) => result(metric, store, offset));
  nock(ORIGIN)
    .get(path)
    .query({ ...windowQuery, page_size: '3' })
    .reply(200, { count: all.length, next: link(2), previous: null, results: all.slice(0, 3) })
    .get(path)
    .query({ ...windowQuery, page: '2', page_size: '3' })
    .reply(200, { count: all.length, next: null, previous: link(1), results: all.slice(3) });
}

function options(overrides: Partial<UnitFetchOptions> = {}): UnitFetchOptions {
  return {
    client: new HttpClient({ timeoutMs: 2000, retry: { ...DEFAULT_RETRY_POLICY, retries: 0 }, clock: virtualClock() }),
    baseUrl: new URL(ORIGIN),
    headers: {},
    pageSize: 3,
    onInvalid: 'fail',
    encoding: { format: 'csv', shape: 'rows' },
    ...overrides,
  };
}

useNock();
afterEach(() => nock.cleanAll());

describe('fetchUnit encodes results as they arrive', () => {
  for (const metric of METRIC_NAMES) {
    for (const format of ['csv', 'ndjson'] as const satisfies readonly OutputFormat[]) {
      it(`${metric} ${format}: the same bytes as sorting every row, and the same counts`, async () => {
        const unit = { metric: METRICS[metric], day: '2026-11-20' };
        serve(metric);
        const encoding = { format, shape: 'rows' } as const;
        const data = await fetchUnit(unit, options({ encoding }));

        const allRows = referenceRows(
          metric,
          RESULTS.map(([store, offset]) => result(metric, store, offset)),
        );
        const expected = format === 'csv' ? referenceCsv(allRows) : referenceNdjson(allRows);
        expect(Buffer.concat(data.pieces).toString('utf8')).toBe(expected);
        expect(data.rowCount).toBe(RESULTS.length * ZONES.length);
        expect(data.count).toBe(RESULTS.length);
        expect(data.pages).toBe(2);
        // The order really is store_code, date, zone (code-unit order): S02 < S1 < S10 < S2.
        expect(allRows[0]?.sortKey[0]).toBe('S02');
        expect(allRows.at(-1)?.sortKey[0]).toBe('S2');
      });
    }
  }

  it('still refetches an incomplete unit (a repeated result) before failing with exit 6', async () => {
    const unit = { metric: METRICS['unique-users'], day: '2026-11-20' };
    const path = '/api/bi/area-metrics/unique-users/';
    const one = result('unique-users', 'S1', 'Z');
    nock(ORIGIN)
      .get(path)
      .query(true)
      .times(3)
      .reply(200, { count: 2, next: null, previous: null, results: [one, one] });
    await expect(fetchUnit(unit, options())).rejects.toMatchObject({ name: 'IncompleteError' });
    expect(nock.isDone()).toBe(true);
  });
});
