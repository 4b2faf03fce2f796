import { describe, expect, it } from 'vitest';
import type { DayProfile } from '../../../src/state/judgement/day-profile.js';
import { describeSuspicion, suspicionOf } from '../../../src/state/judgement/suspect.js';
import { addDays } from '../../../src/window/days.js';

/** Complete days before 2026-11-29 with these totals, the latest first. */
function history(totals: readonly number[], gapEvery = 0): Map<string, DayProfile> {
  const profiles = new Map<string, DayProfile>();
  totals.forEach((total, index) => {
    if (gapEvery > 0 && index % gapEvery === gapEvery - 1) return;
    profiles.set(addDays('2026-11-29', -(index + 1)), [10, 2, 20, total]);
  });
  return profiles;
}
const figures = (total: number, allZero = false) => ({ measure: 'sum of unique_users', total, allZero });

describe('suspicionOf', () => {
  it('judges by the median of the complete days among the 28 before, below a third or above three times', () => {
    const steady = history([100, 100, 90, 110, 100, 95, 105, 100]);
    expect(suspicionOf('2026-11-29', figures(33), steady)).toEqual({ measure: 'sum of unique_users', value: 33, median: 100 });
    expect(suspicionOf('2026-11-29', figures(34), steady)).toBeUndefined();
    expect(suspicionOf('2026-11-29', figures(300), steady)).toBeUndefined();
    expect(suspicionOf('2026-11-29', figures(301), steady)).toMatchObject({ value: 301, median: 100 });
  });

  it('needs 7 complete days among the 28 before; days further back do not count', () => {
    expect(suspicionOf('2026-11-29', figures(1), history([100, 100, 100, 100, 100, 100]))).toBeUndefined();
    expect(suspicionOf('2026-11-29', figures(1), history([100, 100, 100, 100, 100, 100, 100]))).toMatchObject({ median: 100 });
    const sparse = history(
      Array.from({ length: 40 }, () => 100),
      4,
    );
    // Every fourth day missing: 21 of the 28 days before are complete.
    expect(suspicionOf('2026-11-29', figures(1), sparse)).toMatchObject({ median: 100 });
    const old = new Map([...history(Array.from({ length: 40 }, () => 100))].filter(([day]) => day < addDays('2026-11-29', -28)));
    expect(suspicionOf('2026-11-29', figures(1), old)).toBeUndefined();
  });

  it('the 28th day back is the last that counts: with it 7 days judge, without it (the 29th instead) 6 do not', () => {
    const edge = (back: number) =>
      new Map<string, DayProfile>([
        ...[...history([100, 100, 100, 100, 100, 100])],
        [addDays('2026-11-29', -back), [10, 2, 20, 100] as DayProfile],
      ]);
    expect(suspicionOf('2026-11-29', figures(1), edge(28))).toMatchObject({ median: 100 });
    expect(suspicionOf('2026-11-29', figures(1), edge(29))).toBeUndefined();
  });

  it('an even count takes the mean of the two middle totals; a median of 0 judges nothing but zeros', () => {
    expect(suspicionOf('2026-11-29', figures(1), history([10, 20, 30, 40, 50, 60, 70, 80]))).toMatchObject({ median: 45 });
    expect(suspicionOf('2026-11-29', figures(5), history([0, 0, 0, 0, 0, 0, 0]))).toBeUndefined();
  });

  it('every value zero is suspect with or without history, and says so', () => {
    const zero = suspicionOf('2026-11-29', figures(0, true), new Map());
    expect(zero).toEqual({ measure: 'sum of unique_users', value: 0, allZero: true });
    expect(describeSuspicion(zero!)).toBe('every value is zero (the sum of unique_users is 0)');
    expect(describeSuspicion({ measure: 'sum of unique_users', value: 400, median: 100 })).toBe(
      'the sum of unique_users is 400, above three times 100, the median of the complete days of the 28 before it',
    );
  });
});
