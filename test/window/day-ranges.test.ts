import { describe, expect, it } from 'vitest';
import {
  daysOfRanges,
  describeRange,
  rangesHold,
  rangesOfDays,
  withDays,
  withoutDays,
  type DayRange,
} from '../../src/window/day-ranges.js';
import { addDays, type CalendarDay } from '../../src/window/days.js';

describe('day ranges', () => {
  it('merges days in any order into sorted ranges, across month ends', () => {
    expect(rangesOfDays(['2026-12-01', '2026-11-29', '2026-11-30', '2026-11-27', '2026-11-30'])).toEqual([
      ['2026-11-27', '2026-11-27'],
      ['2026-11-29', '2026-12-01'],
    ]);
    expect(daysOfRanges([['2026-02-27', '2026-03-01']])).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });

  it('adds and removes days, splitting a range around a removed day', () => {
    const ranges = withDays([['2026-11-01', '2026-11-03']], ['2026-11-04', '2026-11-06']);
    expect(ranges).toEqual([
      ['2026-11-01', '2026-11-04'],
      ['2026-11-06', '2026-11-06'],
    ]);
    expect(withoutDays(ranges, ['2026-11-02'])).toEqual([
      ['2026-11-01', '2026-11-01'],
      ['2026-11-03', '2026-11-04'],
      ['2026-11-06', '2026-11-06'],
    ]);
    expect(rangesHold(ranges, '2026-11-05')).toBe(false);
    expect(rangesHold(ranges, '2026-11-04')).toBe(true);
  });

  it('describes a range as one day or first..last', () => {
    expect(describeRange(['2026-11-01', '2026-11-01'])).toBe('2026-11-01');
    expect(describeRange(['2026-11-01', '2026-11-03'])).toBe('2026-11-01..2026-11-03');
  });
});

describe('ranges with days added', () => {
  /** What adding means, spelled out: every day of the ranges and the new ones, made into ranges again. */
  const spelledOut = (ranges: readonly DayRange[], days: readonly CalendarDay[]) => rangesOfDays([...daysOfRanges(ranges), ...days]);
  /** A pseudo-random generator with a seed, so that a failing case can be run again. */
  const generator = (seed: number) => () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };

  it('are the ranges of every day spelled out, for ranges in any order, overlapping, touching or not', () => {
    const random = generator(7);
    const dayNear = () => addDays('2026-02-20', Math.floor(random() * 40));
    for (let trial = 0; trial < 500; trial++) {
      const ranges = Array.from({ length: Math.floor(random() * 5) }, (): DayRange => {
        const first = dayNear();
        return [first, addDays(first, Math.floor(random() * 6))];
      });
      const days = Array.from({ length: Math.floor(random() * 4) }, dayNear);
      const input = structuredClone(ranges);
      expect({ trial, ranges: withDays(ranges, days) }).toEqual({ trial, ranges: spelledOut(ranges, days) });
      // The ranges given are left as they were.
      expect(ranges).toEqual(input);
    }
  });

  it('adds a day to a coverage of years without spelling the years out', () => {
    const years: DayRange[] = [
      ['2000-01-01', '2026-11-26'],
      ['2026-11-28', '2026-11-30'],
    ];
    expect(withDays(years, ['2026-11-27'])).toEqual([['2000-01-01', '2026-11-30']]);
    expect(withDays(years, [])).toEqual(years);
  });
});
