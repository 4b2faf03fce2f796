import { describe, expect, it } from 'vitest';
import { daysOfRanges, describeRange, rangesHold, rangesOfDays, withDays, withoutDays } from '../../src/window/day-ranges.js';

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
