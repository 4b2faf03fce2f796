import { describe, expect, it } from 'vitest';
import { columnNames, compareRows, METRICS, rowsOf, type MetricResult } from '../../src/metrics/descriptors.js';

describe('metric descriptors', () => {
  it('give the exact column order of SPEC 2.4', () => {
    expect(columnNames(METRICS['unique-users']).join(',')).toBe('store_code,date,day,granularity,zone,unique_users');
    expect(columnNames(METRICS['avg-screen-time']).join(',')).toBe(
      'store_code,date,day,granularity,zone,avg_screen_time,avg_screen_time_seconds',
    );
    expect(columnNames(METRICS.traffic).join(',')).toBe('store_code,date,day,granularity,zone,traffic_pct');
  });
});

describe('rowsOf', () => {
  it('derives day from the date in its own offset, not in UTC', () => {
    const result: MetricResult = {
      store_code: 'S1',
      date: '2026-11-20T00:00:00+05:30',
      granularity: 'daily',
      values: [{ zone: 'A', unique_users: 4 }],
    };
    // In UTC this instant is 2026-11-19T18:30Z; the store's own calendar day is the 20th.
    expect(rowsOf(METRICS['unique-users'], result)).toEqual([
      { store_code: 'S1', date: '2026-11-20T00:00:00+05:30', day: '2026-11-20', granularity: 'daily', zone: 'A', unique_users: 4 },
    ]);
  });

  it('converts screen time to seconds and keeps traffic text beside its number', () => {
    const screen = rowsOf(METRICS['avg-screen-time'], {
      store_code: 'S1',
      date: '2026-11-20T00:00:00-05:00',
      granularity: 'daily',
      values: [{ zone_name: 'B', avg_screen_time: '01:02:03' }],
    });
    expect(screen[0]).toMatchObject({ zone: 'B', avg_screen_time: '01:02:03', avg_screen_time_seconds: 3723, day: '2026-11-20' });
    const traffic = rowsOf(METRICS.traffic, {
      store_code: 'S1',
      date: '2026-11-20T00:00:00Z',
      granularity: 'daily',
      values: [{ zone: 'C', traffic_pct: '0.10000' }],
    });
    expect(traffic[0]).toMatchObject({ traffic_pct: 0.1, traffic_pct_text: '0.10000' });
  });
});

describe('compareRows', () => {
  it('sorts by store_code, date, zone in code-point order', () => {
    const row = (store_code: string, date: string, zone: string) => ({ store_code, date, zone });
    const rows = [
      row('b', '2026-11-20T00:00:00Z', 'a'),
      row('a', '2026-11-21T00:00:00Z', 'a'),
      row('a', '2026-11-20T00:00:00Z', 'É'),
      row('a', '2026-11-20T00:00:00Z', 'Z'),
      row('a', '2026-11-20T00:00:00Z', '[2] B'),
      row('B', '2026-11-20T00:00:00Z', 'a'),
    ];
    expect(rows.sort(compareRows).map((r) => `${r.store_code}|${r.date.slice(8, 10)}|${r.zone}`)).toEqual([
      'B|20|a',
      'a|20|Z',
      'a|20|[2] B',
      'a|20|É',
      'a|21|a',
      'b|20|a',
    ]);
  });
});
