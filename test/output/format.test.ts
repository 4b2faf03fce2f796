import { describe, expect, it } from 'vitest';
import { METRICS, rowsOf } from '../../src/metrics/descriptors.js';
import { csvHeader, headerOf, resultEncoder } from '../../src/output/format.js';

const csv = resultEncoder({ format: 'csv', shape: 'rows' });
const ndjson = resultEncoder({ format: 'ndjson', shape: 'rows' });
const results = resultEncoder({ format: 'ndjson', shape: 'results' });

const zones = ['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', 'Café Ünïcödé 東京', ' padded '];
const rows = rowsOf(METRICS.traffic, {
  store_code: 'S1',
  date: '2026-11-20T00:00:00+02:00',
  granularity: 'daily',
  values: zones.map((zone) => ({ zone, traffic_pct: '0.10000' })),
});

describe('CSV', () => {
  it('has one header row in column order', () => {
    expect(csvHeader(METRICS.traffic)).toBe('store_code,date,day,granularity,zone,traffic_pct\n');
  });

  it('quotes per RFC 4180 only where needed, with LF line endings, keeping traffic_pct as sent', () => {
    const text = csv(METRICS.traffic, rows, undefined);
    expect(text).toBe(
      [
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,plain,0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"a,b",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"say ""hi""",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"two\nlines",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"cr\rhere",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,Café Ünïcödé 東京,0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily, padded ,0.10000',
        '',
      ].join('\n'),
    );
  });

  it('gives the same text for a field alone or among many rows (values are memoised)', () => {
    const many = Array.from({ length: 5000 }, (_, index) => ({ ...rows[index % rows.length]! }));
    const text = csv(METRICS.traffic, many, undefined);
    expect(text.split('\n').length - 1).toBe(5000 + many.filter((row) => String(row.zone).includes('\n')).length);
    expect(text.startsWith(csv(METRICS.traffic, rows.slice(0, 1), undefined))).toBe(true);
  });

  it('has a header only for rows in CSV', () => {
    expect(headerOf(METRICS.traffic, { format: 'csv', shape: 'rows' })).toBe(csvHeader(METRICS.traffic));
    expect(headerOf(METRICS.traffic, { format: 'ndjson', shape: 'rows' })).toBeUndefined();
    expect(headerOf(METRICS.traffic, { format: 'ndjson', shape: 'results' })).toBeUndefined();
  });
});

describe('NDJSON', () => {
  it('puts metric first, then the columns, with numbers as numbers and no helper fields', () => {
    const first = ndjson(METRICS.traffic, rows.slice(0, 1), undefined);
    expect(first).toBe(
      '{"metric":"traffic","store_code":"S1","date":"2026-11-20T00:00:00+02:00","day":"2026-11-20","granularity":"daily","zone":"plain","traffic_pct":0.1}\n',
    );
    const screen = rowsOf(METRICS['avg-screen-time'], {
      store_code: 'S1',
      date: '2026-11-20T00:00:00Z',
      granularity: 'daily',
      values: [{ zone: 'x', avg_screen_time: '00:01:01' }],
    });
    expect(JSON.parse(ndjson(METRICS['avg-screen-time'], screen, undefined))).toEqual({
      metric: 'avg-screen-time',
      store_code: 'S1',
      date: '2026-11-20T00:00:00Z',
      day: '2026-11-20',
      granularity: 'daily',
      zone: 'x',
      avg_screen_time: '00:01:01',
      avg_screen_time_seconds: 61,
    });
  });

  it('writes one line per result object, as received, for --shape results', () => {
    expect(results(METRICS.traffic, rows, { store_code: 'S1', extra: true })).toBe('{"metric":"traffic","store_code":"S1","extra":true}\n');
  });
});
