import { describe, expect, it } from 'vitest';
import { Dataset, formatOffset, parseInstant, type MetricResult } from '../../src/sandbox/data.js';
import { SANDBOX_STORE_OFFSETS } from '../helpers/vendor.js';

const NOW = new Date('2026-11-22T10:00:00Z'); // yesterday = 2026-11-21
const DAY_MS = 86_400_000;

function utcWindow(day: string): { fromMs: number; toMs: number } {
  return { fromMs: Date.parse(`${day}T00:00:00Z`), toMs: Date.parse(`${day}T23:59:59Z`) };
}

function all(dataset: Dataset, metric: 'unique-users' | 'avg-screen-time' | 'traffic', day: string, now = NOW): MetricResult[] {
  const refs = dataset.query(metric, utcWindow(day), undefined, now);
  return dataset.slice(metric, refs, 0, refs.count);
}

function instantOf(result: MetricResult): number {
  return Date.parse(result.date);
}

describe('sandbox data set', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const a = all(new Dataset({ stores: 20, zones: 8, days: 3, seed: 7 }), 'unique-users', '2026-11-20');
    const b = all(new Dataset({ stores: 20, zones: 8, days: 3, seed: 7 }), 'unique-users', '2026-11-20');
    const c = all(new Dataset({ stores: 20, zones: 8, days: 3, seed: 8 }), 'unique-users', '2026-11-20');
    expect(a).toEqual(b);
    expect(a).toHaveLength(20);
    const byStore = (results: MetricResult[]) =>
      Object.fromEntries(results.map((result) => [result.store_code, JSON.stringify(result.values)]));
    expect(byStore(c)).not.toEqual(byStore(a));
  });

  it('does not depend on the wall clock except for which days exist', () => {
    const dataset = new Dataset({ stores: 12, zones: 6, days: 5, seed: 1 });
    const today = all(dataset, 'traffic', '2026-11-20', NOW);
    const later = all(dataset, 'traffic', '2026-11-20', new Date(NOW.getTime() + 2 * DAY_MS));
    const sortByStore = (results: MetricResult[]) => [...results].sort((x, y) => x.store_code.localeCompare(y.store_code));
    expect(sortByStore(later)).toEqual(sortByStore(today));
    // Beyond the covered days (5 days ending yesterday), nothing exists; today is not covered either.
    expect(all(dataset, 'traffic', '2026-11-16')).toHaveLength(0);
    expect(all(dataset, 'traffic', '2026-11-17')).toHaveLength(12);
    expect(all(dataset, 'traffic', '2026-11-21')).toHaveLength(12);
    expect(all(dataset, 'traffic', '2026-11-22')).toHaveLength(0);
  });

  it('covers every covered UTC day with exactly one result per store, at local midnight inside the window', () => {
    const dataset = new Dataset({ stores: 24, zones: 4, days: 3, seed: 3 });
    for (const day of ['2026-11-19', '2026-11-20', '2026-11-21']) {
      const window = utcWindow(day);
      const results = all(dataset, 'avg-screen-time', day);
      const codes = results.map((result) => result.store_code).sort();
      expect(codes).toEqual(Array.from({ length: 24 }, (_, index) => `S${String(index + 1).padStart(3, '0')}`));
      for (const result of results) {
        expect(result.date).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00[+-]\d{2}:\d{2}$/);
        expect(instantOf(result)).toBeGreaterThanOrEqual(window.fromMs);
        expect(instantOf(result)).toBeLessThanOrEqual(window.toMs);
      }
    }
  });

  it('gives stores varied offsets, with east-of-UTC stores answering the UTC window of the day before', () => {
    const dataset = new Dataset({ stores: 12, zones: 3, days: 2, seed: 1 });
    const offsets = new Set(Array.from({ length: 12 }, (_, index) => dataset.store(index).offsetText));
    for (const required of ['+00:00', '+02:00', '-05:00', '+05:30']) expect(offsets).toContain(required);
    const small = new Dataset({ stores: 4, zones: 3, days: 2, seed: 1 });
    expect(new Set([0, 1, 2, 3].map((index) => small.store(index).offsetText))).toEqual(new Set(['+00:00', '+02:00', '-05:00', '+05:30']));
    const dates = Object.fromEntries(all(dataset, 'unique-users', '2026-11-20').map((r) => [r.store_code, r.date]));
    const codeWithOffset = (offset: string) =>
      dataset.store(Array.from({ length: 12 }, (_, index) => index).find((index) => dataset.store(index).offsetText === offset)!).code;
    expect(dates[codeWithOffset('+02:00')]).toBe('2026-11-21T00:00:00+02:00');
    expect(dates[codeWithOffset('+05:30')]).toBe('2026-11-21T00:00:00+05:30');
    expect(dates[codeWithOffset('+00:00')]).toBe('2026-11-20T00:00:00+00:00');
    expect(dates[codeWithOffset('-05:00')]).toBe('2026-11-20T00:00:00-05:00');
  });

  it('spans -11:00 to +13:00 with 14 stores, and keeps the offsets of the first 12 stores', () => {
    const dataset = new Dataset({ stores: 14, zones: 3, days: 2, seed: 1 });
    const offsets = Array.from({ length: 14 }, (_, index) => dataset.store(index).offsetText);
    expect(offsets).toEqual(SANDBOX_STORE_OFFSETS);
  });

  it('selects by instant for windows that are not whole UTC days', () => {
    const dataset = new Dataset({ stores: 12, zones: 3, days: 3, seed: 1 });
    // 2026-11-20T22:00:00Z is local midnight of 2026-11-21 in +02:00 only.
    const refs = dataset.query(
      'traffic',
      { fromMs: Date.parse('2026-11-20T22:00:00Z'), toMs: Date.parse('2026-11-20T22:00:00Z') },
      undefined,
      NOW,
    );
    const results = dataset.slice('traffic', refs, 0, refs.count);
    expect(results.map((result) => result.date)).toEqual(['2026-11-21T00:00:00+02:00']);
    // gte after lte: nothing, not an error.
    expect(dataset.query('traffic', { fromMs: 10, toMs: 5 }, undefined, NOW).count).toBe(0);
  });

  it('sums traffic shares of every result to exactly 1.00000 with 5 decimals in [0, 1]', () => {
    const dataset = new Dataset({ stores: 300, zones: 30, days: 2, seed: 5 });
    for (const result of all(dataset, 'traffic', '2026-11-21')) {
      const shares = result.values.map((entry) => String(entry.traffic_pct));
      for (const share of shares) expect(share).toMatch(/^(0\.\d{5}|1\.00000)$/);
      const units = shares.reduce((sum, share) => sum + Math.round(Number(share) * 100_000), 0);
      expect(units).toBe(100_000);
    }
  });

  it('produces valid unique users and screen times', () => {
    const dataset = new Dataset({ stores: 100, zones: 10, days: 1, seed: 2 });
    for (const result of all(dataset, 'unique-users', '2026-11-21')) {
      expect(result.granularity).toBe('daily');
      for (const entry of result.values as unknown as { unique_users: number }[]) {
        expect(Number.isInteger(entry.unique_users)).toBe(true);
        expect(entry.unique_users).toBeGreaterThanOrEqual(0);
      }
    }
    for (const result of all(dataset, 'avg-screen-time', '2026-11-21')) {
      for (const entry of result.values as unknown as { avg_screen_time: string }[]) {
        expect(entry.avg_screen_time).toMatch(/^\d{2}:[0-5]\d:[0-5]\d$/);
      }
    }
    expect(formatOffset(-210)).toBe('-03:30');
    expect(formatOffset(0)).toBe('+00:00');
  });

  it('varies zones per store, with [n] LABEL forms, commas, quotes and non-ASCII', () => {
    const dataset = new Dataset({ stores: 40, zones: 12, days: 1, seed: 9 });
    const names: string[] = [];
    const counts = new Set<number>();
    for (let index = 0; index < 40; index += 1) {
      const zones = dataset.store(index).zoneNames;
      expect(new Set(zones).size).toBe(zones.length);
      expect(zones.length).toBeGreaterThanOrEqual(6);
      expect(zones.length).toBeLessThanOrEqual(12);
      counts.add(zones.length);
      names.push(...zones);
    }
    expect(counts.size).toBeGreaterThan(2);
    expect(names.some((name) => /^\[\d+\] \S/.test(name))).toBe(true);
    expect(names.some((name) => name.includes(','))).toBe(true);
    expect(names.some((name) => name.includes('"'))).toBe(true);
    expect(names.some((name) => [...name].some((character) => character.codePointAt(0)! > 0x7f))).toBe(true);
    // The smallest data set already shows the awkward name.
    expect(new Dataset({ stores: 1, zones: 3, days: 1, seed: 1 }).store(0).zoneNames).toContain('[3] Café "Central", Ground floor');
    // More zones than labels stay unique.
    const wide = new Dataset({ stores: 1, zones: 80, days: 1, seed: 1 }).store(0).zoneNames;
    expect(new Set(wide).size).toBe(wide.length);
  });

  it('serves results unsorted but in a stable order', () => {
    const dataset = new Dataset({ stores: 50, zones: 2, days: 3, seed: 1 });
    const window = { fromMs: Date.parse('2026-11-19T00:00:00Z'), toMs: Date.parse('2026-11-21T23:59:59Z') };
    const first = dataset.slice('unique-users', dataset.query('unique-users', window, undefined, NOW), 0, 150);
    const again = dataset.slice('unique-users', new Dataset(dataset.config).query('unique-users', window, undefined, NOW), 0, 150);
    expect(again).toEqual(first);
    const keys = first.map((result) => `${result.store_code}|${result.date}`);
    expect(keys).not.toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(150);
  });

  it('maps store codes both ways and filters by store', () => {
    const dataset = new Dataset({ stores: 1500, zones: 2, days: 2, seed: 1 });
    expect(dataset.storeCode(0)).toBe('S0001');
    expect(dataset.storeIndexOf('S1500')).toBe(1499);
    expect(dataset.storeIndexOf('S1501')).toBeUndefined();
    expect(dataset.storeIndexOf('S15')).toBeUndefined();
    expect(dataset.storeIndexOf('x')).toBeUndefined();
    const refs = dataset.query('traffic', utcWindow('2026-11-21'), 41, NOW);
    expect(dataset.slice('traffic', refs, 0, refs.count).map((result) => result.store_code)).toEqual(['S0042']);
  });

  it('parses ISO date-times with Z or an offset and rejects the rest', () => {
    expect(parseInstant('2026-11-20T00:00:00Z')).toBe(Date.parse('2026-11-20T00:00:00Z'));
    expect(parseInstant('2026-11-20T02:00:00+02:00')).toBe(Date.parse('2026-11-20T00:00:00Z'));
    expect(parseInstant('2026-11-20T02:00:00+0200')).toBe(Date.parse('2026-11-20T00:00:00Z'));
    expect(parseInstant('2026-11-20T00:00:00.500Z')).toBe(Date.parse('2026-11-20T00:00:00.500Z'));
    expect(parseInstant('2026-11-20T00:00:00')).toBeUndefined(); // no offset
    expect(parseInstant('2026-11-20')).toBeUndefined();
    expect(parseInstant('2026-11-20T00:00:00 02:00')).toBeUndefined(); // an unencoded '+' arrives as a space
    expect(parseInstant('2026-13-40T00:00:00Z')).toBeUndefined();
    expect(parseInstant('yesterday')).toBeUndefined();
  });
});
