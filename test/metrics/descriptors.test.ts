import { describe, expect, it } from 'vitest';
import { columnNames, compareResults, METRICS } from '../../src/metrics/descriptors.js';
import { zoneOf } from '../../src/metrics/schema.js';
import { emptySums, totalOf } from '../../src/metrics/measure.js';

describe('metric descriptors', () => {
  it('give the exact column order users load by', () => {
    expect(columnNames(METRICS['unique-users']).join(',')).toBe('store_code,date,day,granularity,zone,unique_users');
    expect(columnNames(METRICS['avg-screen-time']).join(',')).toBe(
      'store_code,date,day,granularity,zone,avg_screen_time,avg_screen_time_seconds',
    );
    expect(columnNames(METRICS.traffic).join(',')).toBe('store_code,date,day,granularity,zone,traffic_pct');
  });

  it('turn a raw value into CSV text and NDJSON value per column', () => {
    const cells = (name: keyof typeof METRICS, raw: unknown) => METRICS[name].columns.map((column) => [column.csv(raw), column.json(raw)]);
    expect(cells('unique-users', 42)).toEqual([['42', '42']]);
    expect(cells('avg-screen-time', '01:02:03')).toEqual([
      ['01:02:03', '"01:02:03"'],
      ['3723', '3723'],
    ]);
    // CSV keeps the API's exact text; NDJSON carries the number.
    expect(cells('traffic', '0.10000')).toEqual([['0.10000', '0.1']]);
  });

  it('warn about traffic that does not sum to 1, and only about traffic', () => {
    const result = (pcts: string[]) => ({
      store_code: 'S1',
      date: '2026-11-20T00:00:00Z',
      granularity: 'daily' as const,
      values: pcts.map((traffic_pct, index) => ({ zone: `Z${index}`, traffic_pct })),
    });
    expect(METRICS.traffic.warningOf?.(result(['0.50000', '0.50000']))).toBeUndefined();
    expect(METRICS.traffic.warningOf?.(result(['0.50000', '0.40000']))).toMatch(/sum to 0.90000, not 1/);
    expect(METRICS['unique-users'].warningOf).toBeUndefined();
  });
});

describe('how each metric totals a day', () => {
  const result = (valueKey: string, raws: unknown[]) => ({
    store_code: 'S1',
    date: '2026-11-20T00:00:00Z',
    granularity: 'daily' as const,
    values: raws.map((raw, index) => ({ zone: `Z${index}`, [valueKey]: raw })),
  });
  const totalOver = (name: keyof typeof METRICS, valueKey: string, results: unknown[][]) => {
    const sums = emptySums();
    for (const raws of results) METRICS[name].total.add(sums, result(valueKey, raws));
    return { sums, total: totalOf(sums, METRICS[name].total) };
  };

  it('unique users: the sum of unique_users', () => {
    expect(totalOver('unique-users', 'unique_users', [[3, 0], [4]])).toEqual({ sums: { value: 7, weight: 3, nonZero: 2 }, total: 7 });
  });

  it('screen time: the mean of avg_screen_time in seconds', () => {
    expect(totalOver('avg-screen-time', 'avg_screen_time', [['00:01:00', '00:00:00'], ['00:02:00']])).toEqual({
      sums: { value: 180, weight: 3, nonZero: 2 },
      total: 60,
    });
  });

  it('traffic: the share of results whose traffic_pct sum to 1, within the rounding of 5 decimals', () => {
    expect(
      totalOver('traffic', 'traffic_pct', [['0.50000', '0.50000'], ['0.33333', '0.33333', '0.33334'], ['0.10000', '0.10000'], []]),
    ).toEqual({
      sums: { value: 2, weight: 3, nonZero: 7 },
      total: 0.666667,
    });
    expect(totalOver('traffic', 'traffic_pct', [['0.00000', '0.00000']]).sums.nonZero).toBe(0);
  });
});

describe('zoneOf and compareResults', () => {
  it('read zone, or zone_name when zone is absent', () => {
    expect(zoneOf({ zone: 'A', zone_name: 'B' })).toBe('A');
    expect(zoneOf({ zone_name: 'B' })).toBe('B');
  });

  it('order results by store_code, then date, in code-unit order (not locale order)', () => {
    const results = [
      { storeCode: 'b', date: '2026-11-20T00:00:00Z' },
      { storeCode: 'a', date: '2026-11-21T00:00:00Z' },
      { storeCode: 'a', date: '2026-11-20T00:00:00Z' },
      { storeCode: 'B', date: '2026-11-20T00:00:00Z' },
      { storeCode: 'É', date: '2026-11-20T00:00:00Z' },
    ];
    expect(results.sort(compareResults).map((r) => `${r.storeCode}|${r.date.slice(8, 10)}`)).toEqual([
      'B|20',
      'a|20',
      'a|21',
      'b|20',
      'É|20',
    ]);
  });
});
