import { describe, expect, it } from 'vitest';
import { Dataset } from '../../src/sandbox/data.js';
import { DAY_NOISE, dayFactor, WEEKDAY_WEIGHTS, weekdayOf } from '../../src/sandbox/rhythm.js';

const DAY_MS = 86_400_000;
const localDay = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / DAY_MS;

/** A store's sum of unique users on a local day. */
function usersOf(dataset: Dataset, store: number, day: number): number {
  return dataset.result('unique-users', store, day).values.reduce((sum, entry) => sum + (entry.unique_users as number), 0);
}

describe('the sandbox rhythm', () => {
  it('knows its weekdays: 2026-11-28 is a Saturday, 2026-11-24 a Tuesday', () => {
    expect(weekdayOf(localDay('2026-11-28'))).toBe(6);
    expect(weekdayOf(localDay('2026-11-24'))).toBe(2);
    expect(weekdayOf(localDay('1970-01-04'))).toBe(0);
  });

  it('has a Saturday twice a Tuesday and a mean weekday of 1', () => {
    expect(WEEKDAY_WEIGHTS[6]! / WEEKDAY_WEIGHTS[2]!).toBeCloseTo(2, 6);
    expect(WEEKDAY_WEIGHTS.reduce((sum, weight) => sum + weight, 0) / 7).toBeCloseTo(1, 2);
  });

  it('is deterministic, and its noise stays within 12% of the weekday and moves days apart by about 10-15%', () => {
    const changes: number[] = [];
    for (let store = 0; store < 20; store++) {
      for (let day = localDay('2026-01-01'); day < localDay('2026-03-01'); day++) {
        const factor = dayFactor(7, store, day);
        expect(factor).toBe(dayFactor(7, store, day));
        const ratio = factor / WEEKDAY_WEIGHTS[weekdayOf(day)]!;
        expect(Math.abs(ratio - 1)).toBeLessThanOrEqual(DAY_NOISE + 1e-9);
        changes.push(Math.abs(Math.log(ratio / (dayFactor(7, store, day - 7) / WEEKDAY_WEIGHTS[weekdayOf(day)]!))));
      }
    }
    const mean = changes.reduce((sum, change) => sum + change, 0) / changes.length;
    expect(mean).toBeGreaterThan(0.06);
    expect(mean).toBeLessThan(0.15);
  });

  it("shows in a store's unique users: its Saturdays well above its Tuesdays, its size its own", () => {
    const dataset = new Dataset({ stores: 3, zones: 6, days: 60, seed: 42 });
    for (let store = 0; store < 3; store++) {
      const saturday = usersOf(dataset, store, localDay('2026-11-28'));
      const tuesday = usersOf(dataset, store, localDay('2026-11-24'));
      expect(saturday / tuesday).toBeGreaterThan(1.5);
      expect(saturday / tuesday).toBeLessThan(2.6);
    }
    expect(usersOf(dataset, 0, localDay('2026-11-28'))).not.toBe(usersOf(dataset, 1, localDay('2026-11-28')));
  });
});
