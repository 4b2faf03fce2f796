import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { addDays, daysBetween, daysFrom, parseDay, yesterday } from '../../src/window/days.js';
import { resolveDays } from '../../src/window/requested-days.js';
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
    expect(() => resolveDays({ kind: 'date', date: '2026-11-22' }, late)).toThrow(
      /--date 2026-11-22 is in the future \(today is 2026-11-21 UTC\)/,
    );
    expect(() => resolveDays({ kind: 'range', from: '2026-11-20', to: '2026-11-22' }, now)).toThrow(/--to 2026-11-22 is in the future/);
    expect(() => resolveDays({ kind: 'range', from: '2026-11-22' }, now)).toThrow(/--from 2026-11-22 is in the future/);
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

describe('day arithmetic from the digits', () => {
  it("agrees with the platform's calendar every day from 1900 to 2400, leap centuries too", () => {
    const viaDate = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
    let day = '1900-01-01';
    for (let step = 0; day < '2400-12-31'; step++) {
      const next = addDays(day, 1);
      if (next !== viaDate(day, 1) || addDays(day, -(step % 400)) !== viaDate(day, -(step % 400))) {
        expect({ day, next, back: addDays(day, -(step % 400)) }).toEqual({ day, next: viaDate(day, 1), back: viaDate(day, -(step % 400)) });
      }
      day = next;
    }
    expect(addDays('2100-02-28', 1)).toBe('2100-03-01');
    expect(addDays('2000-02-28', 1)).toBe('2000-02-29');
    expect(daysFrom('1970-01-01', '2026-11-29')).toBe(Date.parse('2026-11-29') / 86_400_000);
  });

  it('refuses what is not a day rather than count from it', () => {
    expect(() => addDays('2026-11', 1)).toThrow(RangeError);
    expect(() => addDays('not-a-day!', 1)).toThrow(RangeError);
  });
});
