import { describe, expect, it } from 'vitest';
import { METRICS, rowsOf } from '../../src/metrics/descriptors.js';
import { csvChunks, csvHeader, ndjsonResultChunks, ndjsonRowChunks } from '../../src/output/format.js';

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
    const text = [...csvChunks(METRICS.traffic, rows)].join('');
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

  it('writes large inputs in several chunks without losing a row', () => {
    const many = Array.from({ length: 10_000 }, (_, index) => ({ ...rows[0]!, zone: `z${index}` }));
    const chunks = [...csvChunks(METRICS.traffic, many)];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('').split('\n').length - 1).toBe(10_000);
  });
});

describe('NDJSON', () => {
  it('puts metric first, then the columns, with numbers as numbers and no helper fields', () => {
    const [first] = [...ndjsonRowChunks(METRICS.traffic, rows.slice(0, 1))];
    expect(first).toBe(
      '{"metric":"traffic","store_code":"S1","date":"2026-11-20T00:00:00+02:00","day":"2026-11-20","granularity":"daily","zone":"plain","traffic_pct":0.1}\n',
    );
    const screen = rowsOf(METRICS['avg-screen-time'], {
      store_code: 'S1',
      date: '2026-11-20T00:00:00Z',
      granularity: 'daily',
      values: [{ zone: 'x', avg_screen_time: '00:01:01' }],
    });
    expect(JSON.parse([...ndjsonRowChunks(METRICS['avg-screen-time'], screen)].join(''))).toEqual({
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

  it('writes one line per result object for --shape results', () => {
    const results = [{ store_code: 'S1', extra: true }, { store_code: 'S2' }];
    expect([...ndjsonResultChunks(METRICS.traffic, results)].join('')).toBe(
      '{"metric":"traffic","store_code":"S1","extra":true}\n{"metric":"traffic","store_code":"S2"}\n',
    );
  });
});
