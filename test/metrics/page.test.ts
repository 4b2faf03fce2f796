import { describe, expect, it } from 'vitest';
import { MalformedBodyError } from '../../src/fetch/http-client.js';
import { decodePage, type DecodedPage } from '../../src/metrics/page.js';
import { referenceCsv, referenceNdjson, referenceRows } from '../helpers/reference-rows.js';

const bytes = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
const csvJob = { metric: 'unique-users', encoding: { format: 'csv', shape: 'rows' } } as const;

function result(store: string, zones: string[], value: (index: number) => unknown = (index) => index) {
  return { store_code: store, date: '2026-11-20T00:00:00+01:00', granularity: 'daily', values: zones.map((zone, index) => ({ zone, unique_users: value(index) })) };
}

function envelope(results: unknown[], next: string | null = null) {
  return { count: results.length, next, previous: null, results };
}

/** Piece i of the page's output, as text. */
function piece(page: DecodedPage, index: number): string {
  return Buffer.from(page.output.subarray(page.pieceEnds[index - 1] ?? 0, page.pieceEnds[index])).toString('utf8');
}

describe('decodePage', () => {
  it('encodes each valid result as one piece, with its sort key, in page order', () => {
    const results = [result('S2', ['b', 'a']), result('Ś1', ['東京', 'Zürich'])];
    const page = decodePage(bytes(envelope(results, 'https://api.example.test/next')), csvJob);
    expect(page).toMatchObject({ count: 2, next: 'https://api.example.test/next', size: 2, rowCount: 4, rejected: [], warnings: [] });
    expect(page.pieceStoreCodes).toEqual(['S2', 'Ś1']);
    expect(page.pieceDates).toEqual(['2026-11-20T00:00:00+01:00', '2026-11-20T00:00:00+01:00']);
    // Byte offsets, not character offsets: the second piece is all multi-byte zone names.
    expect(piece(page, 0)).toBe(referenceCsv(referenceRows('unique-users', [results[0]!])));
    expect(piece(page, 1)).toBe(referenceCsv(referenceRows('unique-users', [results[1]!])));
    expect(page.pieceEnds.at(-1)).toBe(page.output.byteLength);
  });

  it('sets invalid records aside with the field, the value and the reason, and still counts them', () => {
    const bad = result('S3', ['a'], () => -1);
    const page = decodePage(bytes(envelope([result('S1', ['a']), bad, { nonsense: true }])), csvJob);
    expect(page.size).toBe(3);
    expect(page.keys).toEqual(['S1\u00002026-11-20T00:00:00+01:00', 'S3\u00002026-11-20T00:00:00+01:00', 'undefined\u0000undefined']);
    expect(page.pieceStoreCodes).toEqual(['S1']);
    expect(page.rejected).toHaveLength(2);
    expect(page.rejected[0]).toMatchObject({ field: 'values[0].unique_users', value: -1, reason: 'must be >= 0', record: bad });
  });

  it('reports a zone entry without zone or zone_name at that entry', () => {
    const record = { ...result('S1', ['a', 'b']), values: [{ zone: 'a', unique_users: 1 }, { unique_users: 2 }] };
    const page = decodePage(bytes(envelope([record])), csvJob);
    expect(page.rejected[0]).toMatchObject({ field: 'values[1].zone', reason: 'is missing (neither zone nor zone_name)' });
  });

  it('carries the metric warnings (traffic not summing to 1)', () => {
    const traffic = { store_code: 'S1', date: '2026-11-20T00:00:00Z', granularity: 'daily', values: [{ zone: 'a', traffic_pct: '0.50000' }] };
    const page = decodePage(bytes(envelope([traffic])), { metric: 'traffic', encoding: { format: 'ndjson', shape: 'rows' } });
    expect(page.warnings).toEqual(['store S1 2026-11-20T00:00:00Z: traffic_pct values sum to 0.50000, not 1']);
    expect(piece(page, 0)).toBe(referenceNdjson(referenceRows('traffic', [traffic])));
  });

  it('grows its output past the first megabyte and keeps every byte', () => {
    const zones = Array.from({ length: 200 }, (_, index) => `zone ${String(index).padStart(3, '0')} — ünïcödé`);
    const results = Array.from({ length: 100 }, (_, index) => result(`S${index}`, zones));
    const page = decodePage(bytes(envelope(results)), { metric: 'unique-users', encoding: { format: 'ndjson', shape: 'rows' } });
    expect(page.output.byteLength).toBeGreaterThan(2 ** 20);
    expect(Buffer.from(page.output).toString('utf8')).toBe(referenceNdjson(results.flatMap((one) => referenceRows('unique-users', [one]))));
  });

  it.each([
    ['not JSON', '{"count": 1, "results": [', /not valid JSON \(25 bytes\)/],
    ['not an envelope', { results: [] }, /not a paginated envelope: count/],
    ['a non-URL next link', { count: 0, next: 'page 2', previous: null, results: [] }, /not a paginated envelope: next/],
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
});
