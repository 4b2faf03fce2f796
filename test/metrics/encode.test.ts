import { describe, expect, it } from 'vitest';
import { METRICS, type MetricDescriptor, type MetricResult } from '../../src/metrics/descriptors.js';
import { ByteWriter } from '../../src/metrics/byte-writer.js';
import { headerOf, resultEncoder } from '../../src/metrics/encode.js';
import { referenceCsv, referenceNdjson, referenceRows } from '../helpers/reference-rows.js';

const CSV = { format: 'csv', shape: 'rows' } as const;
const csv = (metric: MetricDescriptor, result: MetricResult, _record?: unknown) => resultEncoder(metric, CSV)(result) ?? 'no text';
const ndjson = (metric: MetricDescriptor, result: MetricResult, _record?: unknown) =>
  resultEncoder(metric, { format: 'ndjson', shape: 'rows' })(result) ?? 'no text';
const results = (metric: MetricDescriptor, _result: MetricResult, record: unknown) =>
  resultEncoder(metric, { format: 'ndjson', shape: 'results' })(record as MetricResult);
const csvHeader = (metric: MetricDescriptor) => headerOf(metric, CSV);

const zones = ['plain', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', 'Café Ünïcödé 東京', ' padded '];
const traffic: MetricResult = {
  store_code: 'S1',
  date: '2026-11-20T00:00:00+02:00',
  granularity: 'daily',
  values: zones.map((zone) => ({ zone, traffic_pct: '0.10000' })),
};

describe('CSV', () => {
  it('has one header row in column order', () => {
    expect(csvHeader(METRICS.traffic)).toBe('store_code,date,day,granularity,zone,traffic_pct\n');
  });

  it('quotes per RFC 4180 only where needed, with LF line endings, rows by zone, keeping traffic_pct as sent', () => {
    expect(csv(METRICS.traffic, traffic, traffic)).toBe(
      [
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily, padded ,0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,Café Ünïcödé 東京,0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"a,b",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"cr\rhere",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,plain,0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"say ""hi""",0.10000',
        'S1,2026-11-20T00:00:00+02:00,2026-11-20,daily,"two\nlines",0.10000',
        '',
      ].join('\n'),
    );
  });

  it('writes what csv-stringify writes for the same rows, for every metric, store codes that need quoting too', () => {
    const store = 'S "9", north';
    const entries = (key: string, raw: (index: number) => unknown) => zones.map((zone, index) => ({ zone_name: zone, [key]: raw(index) }));
    const cases = [
      ['unique-users', entries('unique_users', (index) => index * 11)],
      ['avg-screen-time', entries('avg_screen_time', (index) => `0${index}:5${index}:0${index}`)],
      ['traffic', entries('traffic_pct', (index) => (index === 0 ? '1.00000' : '0.00000'))],
    ] as const;
    for (const [name, values] of cases) {
      const result: MetricResult = { store_code: store, date: '2026-11-20T00:00:00-05:00', granularity: 'daily', values };
      const rows = referenceRows(name, [result]);
      expect(csv(METRICS[name], result, result)).toBe(referenceCsv(rows));
      expect(ndjson(METRICS[name], result, result)).toBe(referenceNdjson(rows));
    }
  });

  it("writes the same bytes straight into a page's output, after what is there, as the buffer grows mid-row", () => {
    const rows = referenceRows('traffic', [traffic]);
    const out = new ByteWriter(Buffer.allocUnsafe(8));
    out.write('before\n');
    resultEncoder(METRICS.traffic, CSV).writeTo?.(traffic, out);
    resultEncoder(METRICS.traffic, CSV).writeTo?.({ ...traffic, values: [] }, out);
    expect(Buffer.from(out.take()).toString('utf8')).toBe(`before\n${referenceCsv(rows)}`);
  });

  it('gives the same text for a zone alone or among many results (values are memoised)', () => {
    const one = csv(METRICS.traffic, traffic, traffic);
    let many = '';
    for (let index = 0; index < 5000; index++) many += csv(METRICS.traffic, { ...traffic, store_code: `S${index}` }, traffic);
    expect(many.startsWith(one.replaceAll('S1,', 'S0,'))).toBe(true);
    expect(many.split('\n').length - 1).toBe(5000 * (zones.length + 1));
  });

  it('has a header only for rows in CSV', () => {
    expect(headerOf(METRICS.traffic, { format: 'csv', shape: 'rows' })).toBe(csvHeader(METRICS.traffic));
    expect(headerOf(METRICS.traffic, { format: 'ndjson', shape: 'rows' })).toBeUndefined();
    expect(headerOf(METRICS.traffic, { format: 'ndjson', shape: 'results' })).toBeUndefined();
  });
});

describe('NDJSON', () => {
  it('puts metric first, then the columns, with numbers as numbers and no helper fields', () => {
    const first = ndjson(METRICS.traffic, { ...traffic, values: traffic.values.slice(0, 1) }, traffic);
    expect(first).toBe(
      '{"metric":"traffic","store_code":"S1","date":"2026-11-20T00:00:00+02:00","day":"2026-11-20","granularity":"daily","zone":"plain","traffic_pct":0.1}\n',
    );
    const screen: MetricResult = {
      store_code: 'S1',
      date: '2026-11-20T00:00:00Z',
      granularity: 'daily',
      values: [{ zone: 'x', avg_screen_time: '00:01:01' }],
    };
    expect(JSON.parse(ndjson(METRICS['avg-screen-time'], screen, screen))).toEqual({
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
    expect(results(METRICS.traffic, traffic, { store_code: 'S1', extra: true })).toBe(
      '{"metric":"traffic","store_code":"S1","extra":true}\n',
    );
  });

  it('gives no line for a record nested deeper than JSON.stringify can go (the page fails as malformed)', () => {
    let deep: unknown = 0;
    for (let depth = 0; depth < 20_000; depth++) deep = [deep];
    expect(results(METRICS.traffic, traffic, { ...traffic, extra: deep })).toBeUndefined();
  });
});
