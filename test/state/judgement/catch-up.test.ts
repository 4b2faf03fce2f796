import { describe, expect, it } from 'vitest';
import { catchUpDays, SUSPECT_REFETCHES } from '../../../src/state/judgement/catch-up.js';
import { addDays } from '../../../src/window/days.js';

describe('catchUpDays', () => {
  const now = new Date('2026-11-21T02:30:00Z');
  const plain = { maxDays: 31, lookback: 0 };
  const after = (
    settledThrough: string | undefined,
    pending: string[] = [],
    complete: string[] = settledThrough ? [settledThrough] : [],
  ) => ({
    settledThrough,
    pending,
    complete,
  });

  it('every day after the last settled one through yesterday', () => {
    expect(catchUpDays(after('2026-11-16'), plain, now)).toEqual({
      days: ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'],
      lookback: [],
      pending: [],
      fresh: ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'],
    });
    expect(catchUpDays(after('2026-11-20'), plain, now).days).toEqual([]);
  });

  it('no coverage means yesterday only, and no look-back', () => {
    expect(catchUpDays(after(undefined), { maxDays: 31, lookback: 2 }, now).days).toEqual(['2026-11-20']);
  });

  it('a pending day is retried beside the new days and never holds them back', () => {
    const plan = catchUpDays(after('2026-11-18', ['2026-11-10', '2026-11-19']), plain, now);
    expect(plan.days).toEqual(['2026-11-10', '2026-11-19', '2026-11-20']);
    expect(plan.pending).toEqual(['2026-11-10', '2026-11-19']);
    expect(plan.fresh).toEqual(['2026-11-20']);
  });

  it('--max-days bounds the new days and the pending ones, oldest first, and says what is left', () => {
    const pending = ['2026-09-01', '2026-09-02', '2026-09-03', '2026-09-04', '2026-09-05', '2026-09-06'];
    expect(catchUpDays(after('2026-10-10', pending), { maxDays: 5, lookback: 0 }, now)).toEqual({
      days: [...pending.slice(0, 5), '2026-10-11', '2026-10-12', '2026-10-13', '2026-10-14', '2026-10-15'],
      lookback: [],
      pending: pending.slice(0, 5),
      fresh: ['2026-10-11', '2026-10-12', '2026-10-13', '2026-10-14', '2026-10-15'],
      freshLeft: { from: '2026-10-16', to: '2026-11-20', count: 36 },
      pendingLeft: 1,
    });
  });

  it('--lookback adds the latest complete days, also when nothing is missing', () => {
    const complete = ['2026-11-15', '2026-11-17', '2026-11-18'];
    expect(catchUpDays(after('2026-11-18', [], complete), { maxDays: 31, lookback: 2 }, now).days).toEqual([
      '2026-11-17',
      '2026-11-18',
      '2026-11-19',
      '2026-11-20',
    ]);
    expect(catchUpDays(after('2026-11-20', [], ['2026-11-20']), { maxDays: 31, lookback: 1 }, now)).toMatchObject({
      days: ['2026-11-20'],
      lookback: ['2026-11-20'],
    });
  });
});

describe('catchUpDays: held suspect days', () => {
  const now = new Date('2026-12-31T12:00:00Z');
  const held = Array.from({ length: 40 }, (_, index) => addDays('2026-11-01', index));
  const coverage = {
    complete: [],
    settledThrough: '2026-12-29',
    pending: [...held, '2026-12-30'],
    suspect: new Set(held),
  };

  it('40 held days never keep a not-over day from being fetched: it comes first, then at most 7 held days', () => {
    const plan = catchUpDays(coverage, { maxDays: 31, lookback: 0 }, now);
    expect(plan.pending).toContain('2026-12-30');
    expect(plan.pending.filter((day) => held.includes(day))).toHaveLength(SUSPECT_REFETCHES);
    expect(SUSPECT_REFETCHES).toBe(7);
    // Held days waiting for their turn are not a cut of --max-days: no warning every night about them.
    expect(plan).toMatchObject({ heldRetried: 7, heldLeft: 40 - 7 });
    expect(plan.pendingLeft).toBeUndefined();
  });

  it('takes the held days in turns, night by night, so that each is fetched again within a week', () => {
    const fetched = new Set<string>();
    for (let night = 0; night < 6; night++) {
      const plan = catchUpDays(coverage, { maxDays: 31, lookback: 0 }, new Date(now.getTime() + night * 86_400_000));
      for (const day of plan.pending) fetched.add(day);
    }
    expect(held.every((day) => fetched.has(day))).toBe(true);
  });

  it('gives held days only the room --max-days leaves', () => {
    expect(catchUpDays(coverage, { maxDays: 3, lookback: 0 }, now).pending.filter((day) => held.includes(day))).toHaveLength(2);
  });
});
