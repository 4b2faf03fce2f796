import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { addDays, catchUpDays, daysBetween, daysFrom, isSettled, parseDay, resolveDays, shouldGiveUp, today, yesterday } from '../../src/window/days.js';
import { dayWindow } from '../../src/window/day-mode.js';

describe('yesterday (UTC)', () => {
  it('is the previous UTC day just after midnight and just before the next one', () => {
    expect(yesterday(new Date('2026-11-21T00:00:30Z'))).toBe('2026-11-20');
    expect(yesterday(new Date('2026-11-21T23:59:59Z'))).toBe('2026-11-20');
  });

  it('ignores the local time zone of the machine', () => {
    // 2026-11-21T01:00+05:00 is still 2026-11-20 in UTC.
    expect(yesterday(new Date('2026-11-21T01:00:00+05:00'))).toBe('2026-11-19');
  });

  it('crosses month, year and leap-day boundaries', () => {
    expect(yesterday(new Date('2026-03-01T00:00:30Z'))).toBe('2026-02-28');
    expect(yesterday(new Date('2028-03-01T00:00:30Z'))).toBe('2028-02-29');
    expect(yesterday(new Date('2027-01-01T00:00:30Z'))).toBe('2026-12-31');
  });
});

describe('parseDay', () => {
  it.each(['2026-02-30', '2026-13-01', '2026-2-3', '20261120', '2026-11-20T00:00:00Z', '', 'yesterday', '2027-02-29'])(
    'rejects %j as a usage error',
    (value) => {
      expect(() => parseDay(value, '--date')).toThrow(UsageError);
      expect(() => parseDay(value, '--date')).toThrow(/--date .* is not a valid date; use YYYY-MM-DD/);
    },
  );

  it('accepts real days, including 29 February of a leap year', () => {
    expect(parseDay('2028-02-29', '--date')).toBe('2028-02-29');
  });
});

describe('resolveDays', () => {
  const now = new Date('2026-11-21T10:00:00Z');

  it('defaults to yesterday', () => {
    expect(resolveDays({ kind: 'default' }, now)).toEqual(['2026-11-20']);
  });

  it('splits an inclusive range into one day each, across a year end', () => {
    const later = new Date('2027-01-05T10:00:00Z');
    expect(resolveDays({ kind: 'range', from: '2026-12-30', to: '2027-01-02' }, later)).toEqual([
      '2026-12-30',
      '2026-12-31',
      '2027-01-01',
      '2027-01-02',
    ]);
  });

  it('treats a missing --to as --from', () => {
    expect(resolveDays({ kind: 'range', from: '2026-11-01' }, now)).toEqual(['2026-11-01']);
  });

  it('refuses --from after --to', () => {
    expect(() => resolveDays({ kind: 'range', from: '2026-11-05', to: '2026-11-01' }, now)).toThrow(/after --to/);
  });

  it('accepts today but refuses a future day with a usage error naming the flag and today', () => {
    expect(resolveDays({ kind: 'date', date: '2026-11-21' }, now)).toEqual(['2026-11-21']);
    expect(resolveDays({ kind: 'range', from: '2026-11-20', to: '2026-11-21' }, now)).toEqual(['2026-11-20', '2026-11-21']);
    // Just before midnight UTC, tomorrow is still the future, whatever the machine's zone.
    const late = new Date('2026-11-21T23:59:59Z');
    expect(() => resolveDays({ kind: 'date', date: '2026-11-22' }, late)).toThrow(UsageError);
    expect(() => resolveDays({ kind: 'date', date: '2026-11-22' }, late)).toThrow(/--date 2026-11-22 is in the future \(today is 2026-11-21 UTC\)/);
    expect(() => resolveDays({ kind: 'range', from: '2026-11-20', to: '2026-11-22' }, now)).toThrow(/--to 2026-11-22 is in the future/);
    expect(() => resolveDays({ kind: 'range', from: '2026-11-22' }, now)).toThrow(/--from 2026-11-22 is in the future/);
  });
});

describe('catchUpDays', () => {
  const now = new Date('2026-11-21T02:30:00Z');
  const plain = { maxDays: 31, lookback: 0 };
  const after = (settledThrough: string | undefined, pending: string[] = [], complete: string[] = settledThrough ? [settledThrough] : []) => ({
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
    expect(catchUpDays(after('2026-11-18', [], complete), { maxDays: 31, lookback: 2 }, now).days).toEqual(['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']);
    expect(catchUpDays(after('2026-11-20', [], ['2026-11-20']), { maxDays: 31, lookback: 1 }, now)).toMatchObject({ days: ['2026-11-20'], lookback: ['2026-11-20'] });
  });
});

describe('shouldGiveUp', () => {
  it('a day is given up once its window ended giveUpDays ago', () => {
    // The window of 2026-11-06 ended at 2026-11-07T00:00Z; 14 days later is 2026-11-21T00:00Z.
    expect(shouldGiveUp('2026-11-06', 14, new Date('2026-11-20T23:59:59Z'))).toBe(false);
    expect(shouldGiveUp('2026-11-06', 14, new Date('2026-11-21T00:00:00Z'))).toBe(true);
  });
});

describe('isSettled', () => {
  const now = new Date('2026-11-21T02:30:00Z');

  it('a day is settled once it is settleDays old (yesterday is 1 day old)', () => {
    expect(isSettled('2026-11-20', 3, now)).toBe(false);
    expect(isSettled('2026-11-19', 3, now)).toBe(false);
    expect(isSettled('2026-11-18', 3, now)).toBe(true);
    expect(isSettled('2026-11-20', 1, now)).toBe(true);
    expect(daysFrom('2026-11-18', '2026-11-21')).toBe(3);
    expect(today(now)).toBe('2026-11-21');
  });
});

describe('a UTC day', () => {
  it('is requested as the whole day, inclusive', () => {
    expect(dayWindow('2028-02-29', 'utc')).toEqual({ gte: '2028-02-29T00:00:00Z', lte: '2028-02-29T23:59:59Z' });
  });

  it('day arithmetic is calendar arithmetic', () => {
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(daysBetween('2026-02-27', '2026-03-01')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });
});
