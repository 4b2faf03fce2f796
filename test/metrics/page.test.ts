import { describe, expect, it } from 'vitest';
import { MalformedBodyError } from '../../src/fetch/exchange.js';
import { METRICS, type MetricName } from '../../src/metrics/descriptors.js';
import { resultEncoder } from '../../src/metrics/encode.js';
import { decodePage, type PageContext } from '../../src/metrics/page.js';
import { requestScope } from '../../src/metrics/unit.js';
import type { OutputFormat } from '../../src/output/format.js';
import { referenceCsv, referenceNdjson, referenceRows } from '../helpers/reference-rows.js';

const bytes = (value: unknown) =>
  value instanceof Uint8Array ? value : new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

function contextOf(name: MetricName, format: OutputFormat, storeCode?: string): PageContext {
  const metric = METRICS[name];
  const unit = { metric, day: '2026-11-19', ...(storeCode === undefined ? {} : { storeCode }) };
  return { metric, scope: requestScope(unit), encode: resultEncoder(metric, { format, shape: 'rows' }) };
}
const csvJob = contextOf('unique-users', 'csv');

function result(store: string, zones: string[], value: (index: number) => unknown = (index) => index) {
  return {
    store_code: store,
    date: '2026-11-20T00:00:00+01:00',
    granularity: 'daily',
    values: zones.map((zone, index) => ({ zone, unique_users: value(index) })),
  };
}

function envelope(results: unknown[], next: string | null = null) {
  return { count: results.length, next, previous: null, results };
}

describe('decodePage', () => {
  it('encodes each valid result as one piece, with its sort key, in page order', () => {
    const results = [result('S2', ['b', 'a']), result('Ś1', ['東京', 'Zürich'])];
    const page = decodePage(bytes(envelope(results, 'https://api.example.test/next')), csvJob);
    expect(page).toMatchObject({ count: 2, next: 'https://api.example.test/next', size: 2, rowCount: 4, rejected: [], warnings: [] });
    expect(page.results.map((one) => one.storeCode)).toEqual(['S2', 'Ś1']);
    expect(page.results.map((one) => one.date)).toEqual(['2026-11-20T00:00:00+01:00', '2026-11-20T00:00:00+01:00']);
    expect(Buffer.from(page.results[0]!.bytes).toString('utf8')).toBe(referenceCsv(referenceRows('unique-users', [results[0]!])));
    expect(Buffer.from(page.results[1]!.bytes).toString('utf8')).toBe(referenceCsv(referenceRows('unique-users', [results[1]!])));
    expect(page.keys).toEqual([`S2\u0000${Date.parse('2026-11-19T23:00:00Z')}`, `Ś1\u0000${Date.parse('2026-11-19T23:00:00Z')}`]);
  });

  it("gives each valid result what it adds to its store's day total; those set aside add nothing", () => {
    const page = decodePage(
      bytes(envelope([result('S1', ['a', 'b'], (index) => index * 5), result('S3', ['a'], () => -1), result('S2', ['a'], () => 7)])),
      csvJob,
    );
    expect(page.results.map(({ storeCode, sums }) => [storeCode, sums])).toEqual([
      ['S1', { value: 5, weight: 2, nonZero: 1 }],
      ['S2', { value: 7, weight: 1, nonZero: 1 }],
    ]);
  });

  it('sets invalid records aside with the field, the value and the reason, and still counts them (not as repeats)', () => {
    const bad = result('S3', ['a'], () => -1);
    const page = decodePage(
      bytes(envelope([result('S1', ['a']), bad, { nonsense: true }, { store_code: null }, { store_code: null }])),
      csvJob,
    );
    expect(page.size).toBe(5);
    expect(page.keys).toEqual([`S1\u0000${Date.parse('2026-11-19T23:00:00Z')}`]);
    expect(page.results.map((one) => one.storeCode)).toEqual(['S1']);
    expect(page.rejected).toHaveLength(4);
    expect(page.rejected[0]).toMatchObject({ field: 'values[0].unique_users', value: -1, reason: 'must be >= 0', record: bad });
  });

  it('reports a zone entry without zone or zone_name at that entry', () => {
    const record = { ...result('S1', ['a', 'b']), values: [{ zone: 'a', unique_users: 1 }, { unique_users: 2 }] };
    const page = decodePage(bytes(envelope([record])), csvJob);
    expect(page.rejected[0]).toMatchObject({ field: 'values[1].zone', reason: 'is missing (neither zone nor zone_name)' });
  });

  it('carries the metric warnings (traffic not summing to 1)', () => {
    const traffic = {
      store_code: 'S1',
      date: '2026-11-19T00:00:00Z',
      granularity: 'daily',
      values: [{ zone: 'a', traffic_pct: '0.50000' }],
    };
    const page = decodePage(bytes(envelope([traffic])), contextOf('traffic', 'ndjson'));
    expect(page.warnings).toEqual(['store S1 2026-11-19T00:00:00Z: traffic_pct values sum to 0.50000, not 1']);
    expect(Buffer.from(page.results[0]!.bytes).toString('utf8')).toBe(referenceNdjson(referenceRows('traffic', [traffic])));
  });

  it('sets aside a result outside the requested day, or of another store than the one asked for', () => {
    const late = { ...result('S1', ['a']), date: '2026-11-24T00:00:00+01:00' };
    const page = decodePage(bytes(envelope([late, result('S2', ['a'])])), contextOf('unique-users', 'csv', 'S2'));
    expect(page.rejected.map((one) => one.field)).toEqual(['date']);
    const other = decodePage(bytes(envelope([result('S1', ['a'])])), contextOf('unique-users', 'csv', 'S2'));
    expect(other.rejected[0]).toMatchObject({ field: 'store_code', value: 'S1' });
  });

  it.each([
    ['not JSON', '{"count": 1, "results": [', /not valid JSON \(25 bytes\)/],
    ['not an envelope', { results: [] }, /not a paginated envelope: count/],
    ['a non-URL next link', { count: 0, next: 'page 2', previous: null, results: [] }, /not a paginated envelope: next/],
    ['a Latin-1 body', Buffer.from('{"count":0,"next":null,"previous":null,"results":[],"x":"Caf\xe9"}', 'latin1'), /not UTF-8 text/],
  ])('throws MalformedBodyError for %s (retried like a transient failure)', (_name, body, message) => {
    let error: unknown;
    try {
      decodePage(bytes(body), csvJob);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(MalformedBodyError);
    expect((error as Error).message).toMatch(message);
  });

  it('in local mode leaves out the neighbouring local days: received, in the repeat keys, not written', () => {
    const metric = METRICS['unique-users'];
    const unit = { metric, day: '2026-11-22', mode: 'local' as const };
    const local: PageContext = { metric, scope: requestScope(unit), encode: resultEncoder(metric, { format: 'csv', shape: 'rows' }) };
    const onDay = (store: string, date: string) => ({ ...result(store, ['a']), date });
    const page = decodePage(
      bytes(
        envelope([
          onDay('EAST', '2026-11-23T00:00:00+13:00'),
          onDay('WEST', '2026-11-22T00:00:00-11:00'),
          onDay('OLD', '2026-11-21T00:00:00-11:00'),
        ]),
      ),
      local,
    );
    expect(page).toMatchObject({ size: 3, dropped: 2, rowCount: 1, rejected: [] });
    expect(page.results.map((one) => [one.storeCode, one.instant])).toEqual([['WEST', Date.parse('2026-11-22T11:00:00Z')]]);
    expect(page.keys).toHaveLength(3);
  });
});
