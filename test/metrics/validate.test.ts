import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import { trafficSumWarning, validateResult } from '../../src/metrics/validate.js';

const base = { store_code: 'S001', date: '2026-11-20T00:00:00+02:00', granularity: 'daily' };
const good = {
  'unique-users': { ...base, values: [{ zone: 'A', unique_users: 3 }] },
  'avg-screen-time': { ...base, values: [{ zone: 'A', avg_screen_time: '00:05:09' }] },
  traffic: { ...base, values: [{ zone: 'A', traffic_pct: '1.00000' }] },
} as const;

describe('validateResult', () => {
  it.each(Object.entries(good))('accepts a valid %s result', (name, record) => {
    expect(validateResult(METRICS[name as keyof typeof METRICS], record).ok).toBe(true);
  });

  it('accepts zone_name in place of zone, and Z as an offset', () => {
    const record = { ...base, date: '2026-11-20T00:00:00Z', values: [{ zone_name: 'B', unique_users: 0 }] };
    expect(validateResult(METRICS['unique-users'], record).ok).toBe(true);
  });

  it.each([
    ['unique-users', { ...base, store_code: '' }, 'store_code', ''],
    ['unique-users', { ...base, store_code: 7 }, 'store_code', 7],
    ['unique-users', { ...base, date: '2026-11-20T00:00:00' }, 'date', '2026-11-20T00:00:00'],
    ['unique-users', { ...base, date: '2026-11-20' }, 'date', '2026-11-20'],
    ['unique-users', { ...base, date: '2026-02-30T00:00:00+02:00' }, 'date', '2026-02-30T00:00:00+02:00'],
    ['unique-users', { ...base, granularity: 'hourly' }, 'granularity', 'hourly'],
    ['unique-users', { ...base, values: 'A' }, 'values', 'A'],
    ['unique-users', { ...base, values: [{ zone: 'A', unique_users: -1 }] }, 'values[0].unique_users', -1],
    ['unique-users', { ...base, values: [{ zone: 'A', unique_users: 1.5 }] }, 'values[0].unique_users', 1.5],
    ['unique-users', { ...base, values: [{ zone: 'A', unique_users: '3' }] }, 'values[0].unique_users', '3'],
    ['unique-users', { ...base, values: [{ unique_users: 3 }] }, 'values[0].zone', undefined],
    ['unique-users', { ...base, values: [{ zone: '', unique_users: 3 }] }, 'values[0].zone', ''],
    ['avg-screen-time', { ...base, values: [{ zone: 'A', avg_screen_time: '1:75:00' }] }, 'values[0].avg_screen_time', '1:75:00'],
    ['avg-screen-time', { ...base, values: [{ zone: 'A', avg_screen_time: '00:60:00' }] }, 'values[0].avg_screen_time', '00:60:00'],
    ['avg-screen-time', { ...base, values: [{ zone: 'A', avg_screen_time: '00:00:60' }] }, 'values[0].avg_screen_time', '00:00:60'],
    ['avg-screen-time', { ...base, values: [{ zone: 'A', avg_screen_time: 300 }] }, 'values[0].avg_screen_time', 300],
    ['traffic', { ...base, values: [{ zone: 'A', traffic_pct: 'abc' }] }, 'values[0].traffic_pct', 'abc'],
    ['traffic', { ...base, values: [{ zone: 'A', traffic_pct: '1.00001' }] }, 'values[0].traffic_pct', '1.00001'],
    ['traffic', { ...base, values: [{ zone: 'A', traffic_pct: '-0.10000' }] }, 'values[0].traffic_pct', '-0.10000'],
    ['traffic', { ...base, values: [{ zone: 'A', traffic_pct: 0.5 }] }, 'values[0].traffic_pct', 0.5],
  ])('%s: %j breaks %s', (name, record, field, value) => {
    const validation = validateResult(METRICS[name as keyof typeof METRICS], record);
    expect(validation.ok).toBe(false);
    if (validation.ok) return;
    expect(validation.violation.field).toBe(field);
    expect(validation.violation.value).toEqual(value);
    expect(validation.violation.reason.length).toBeGreaterThan(3);
  });
});

describe('trafficSumWarning', () => {
  const result = (values: string[]) => ({
    ...base,
    granularity: 'daily' as const,
    values: values.map((traffic_pct, index) => ({ zone: `Z${index}`, traffic_pct })),
  });

  it('allows the rounding of 5 decimals: 0.00001 per zone', () => {
    expect(trafficSumWarning(result(['0.33333', '0.33333', '0.33333']))).toBeUndefined();
    expect(trafficSumWarning(result(['0.33334', '0.33334', '0.33334']))).toBeUndefined();
  });

  it('warns beyond it', () => {
    expect(trafficSumWarning(result(['0.50000', '0.40000']))).toMatch(/sum to 0\.90000, not 1/);
    expect(trafficSumWarning(result(['0.33340', '0.33340', '0.33340']))).toMatch(/sum to 1\.00020/);
  });
});
