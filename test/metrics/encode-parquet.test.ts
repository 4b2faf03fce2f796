import { describe, expect, it } from 'vitest';
import { columnNames, METRICS, type MetricName, type MetricResult } from '../../src/metrics/descriptors.js';
import { parquetTableOf, resultEncoder } from '../../src/metrics/encode.js';
import { referenceRows, resultOfZones } from '../helpers/reference-rows.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const PARQUET = { format: 'parquet', shape: 'rows' } as const;
const WINDOW = { gte: '2026-11-20T00:00:00Z', lte: '2026-11-20T23:59:59Z' };
const ZONES = ['Zb', '[2] CHECKOUT, TILLS 1-6', 'Café "Central"', 'two\nlines', 'back\\slash', '食品売り場', 'Z a'];

/** A result of every zone; traffic 0.1 in the first, 0.15 in each of the six others. */
const result = (metric: MetricName, store: string, date: string): MetricResult =>
  resultOfZones(metric, store, date, ZONES, (place) => (place === 0 ? '0.10000' : '0.15000'));

describe.each(METRIC_NAMES)('%s as Parquet rows', (metric) => {
  it('one JSON line per result: its shared fields, then each zone’s fields, the CSV texts in the CSV’s order', () => {
    const encode = resultEncoder(METRICS[metric], PARQUET);
    const table = parquetTableOf(METRICS[metric], PARQUET, WINDOW);
    const shared = table?.sharedColumns ?? 0;
    const results = [result(metric, 'S"1', '2026-11-20T00:00:00+14:00'), result(metric, 'S2', '2026-11-20T23:00:00-11:00')];
    const rows = results.flatMap((each) => {
      const text = encode(each) ?? '';
      expect(text.endsWith('\n') && !text.slice(0, -1).includes('\n')).toBe(true);
      const fields = JSON.parse(text) as unknown[];
      const own = fields[shared] as string[][];
      return own.map((row) => [...(fields.slice(0, shared) as string[]), ...row]);
    });
    expect(rows).toEqual(referenceRows(metric, results).map((row) => row.csvFields));
  });

  it('the table names the CSV columns, typed, and says what wrote the file', () => {
    const table = parquetTableOf(METRICS[metric], PARQUET, WINDOW);
    expect(table?.columns.map((column) => column.name)).toEqual(columnNames(METRICS[metric]));
    expect(table?.columns.slice(0, 5).map((column) => column.type)).toEqual(['string', 'timestamp', 'date', 'string', 'string']);
    expect(table?.metadata.map((entry) => entry.key)).toEqual([
      'area_metrics.version',
      'area_metrics.metric',
      'area_metrics.datetime_gte',
      'area_metrics.datetime_lte',
    ]);
    expect(table?.metadata[1]?.value).toBe(metric);
  });

  it('no table for the other formats and shapes', () => {
    expect(parquetTableOf(METRICS[metric], { format: 'csv', shape: 'rows' }, WINDOW)).toBeUndefined();
    expect(parquetTableOf(METRICS[metric], { format: 'parquet', shape: 'results' }, WINDOW)).toBeUndefined();
  });
});
