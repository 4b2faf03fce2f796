import { describe, expect, it } from 'vitest';
import { dayWindow, defaultDay, isDayOrNeighbour, isNotOver, localDayOf, overAt, startsInFuture } from '../../src/window/day-mode.js';

/** A store's local midnight of `day` at `offset` (e.g. '+14:00'), as the API spells `date`, and its instant. */
function midnight(day: string, offset: string): number {
  return Date.parse(`${day}T00:00:00${offset}`);
}

describe('dayWindow', () => {
  it('is the UTC day itself in UTC mode', () => {
    expect(dayWindow('2026-11-22', 'utc')).toEqual({ gte: '2026-11-22T00:00:00Z', lte: '2026-11-22T23:59:59Z' });
  });

  it("holds every offset's midnight of a local day, from +14:00 to -12:00, across a month end", () => {
    const window = dayWindow('2026-12-01', 'local');
    expect(window).toEqual({ gte: '2026-11-30T10:00:00Z', lte: '2026-12-01T12:00:00Z' });
    for (const offset of ['+14:00', '+13:00', '+05:45', '+00:00', '-03:30', '-11:00', '-12:00']) {
      const instant = midnight('2026-12-01', offset);
      expect(instant).toBeGreaterThanOrEqual(Date.parse(window.gte));
      expect(instant).toBeLessThanOrEqual(Date.parse(window.lte));
    }
    // The neighbours that also fall inside: D+1 far east, D-1 far west.
    expect(midnight('2026-12-02', '+14:00')).toBeLessThanOrEqual(Date.parse(window.lte));
    expect(midnight('2026-11-30', '-12:00')).toBeGreaterThanOrEqual(Date.parse(window.gte));
  });
});

describe('overAt', () => {
  it('a UTC day is over 25 h after its window ends: its last local days started just before midnight UTC', () => {
    expect(new Date(overAt('2026-11-22', 'utc')).toISOString()).toBe('2026-11-24T00:59:59.000Z');
  });

  it('a local day is over 25 h after its -12:00 midnight', () => {
    expect(new Date(overAt('2026-11-22', 'local')).toISOString()).toBe('2026-11-23T13:00:00.000Z');
  });
});

describe('defaultDay', () => {
  it('is yesterday in UTC mode', () => {
    expect(defaultDay('utc', new Date('2026-11-23T02:30:00Z'))).toBe('2026-11-22');
  });

  it('is the latest local day over everywhere in local mode', () => {
    expect(defaultDay('local', new Date('2026-11-23T12:59:59Z'))).toBe('2026-11-21');
    expect(defaultDay('local', new Date('2026-11-23T13:00:00Z'))).toBe('2026-11-22');
    expect(defaultDay('local', new Date('2026-11-23T02:30:00Z'))).toBe('2026-11-21');
  });
});

describe('isDayOrNeighbour', () => {
  it('a neighbour is the day before or after, across a year end', () => {
    expect(isDayOrNeighbour('2027-01-01', '2026-12-31')).toBe(true);
    expect(isDayOrNeighbour('2026-12-31', '2027-01-01')).toBe(true);
    expect(isDayOrNeighbour('2026-12-31', '2027-01-02')).toBe(false);
  });
});

describe('isNotOver', () => {
  it('at 18:28 UTC on the next day, a UTC day is not over: stores east of UTC are still in the local day after it', () => {
    expect(isNotOver('2026-11-22', 'utc', new Date('2026-11-23T18:28:00Z'))).toBe(true);
    expect(isNotOver('2026-11-22', 'utc', new Date('2026-11-24T00:59:58Z'))).toBe(true);
    expect(isNotOver('2026-11-22', 'utc', new Date('2026-11-24T00:59:59Z'))).toBe(false);
  });

  it('a local day is not over until 25 h after its -12:00 midnight, even when every store has ended its day', () => {
    expect(isNotOver('2026-11-22', 'local', new Date('2026-11-23T12:59:59Z'))).toBe(true);
    expect(isNotOver('2026-11-22', 'local', new Date('2026-11-23T13:00:00Z'))).toBe(false);
  });
});

describe('startsInFuture', () => {
  it('a UTC day starts at its midnight, a local day at its +14:00 midnight the day before', () => {
    const now = new Date('2026-11-23T10:00:00Z');
    expect(startsInFuture('2026-11-24', 'utc', now)).toBe(true);
    expect(startsInFuture('2026-11-23', 'utc', now)).toBe(false);
    expect(startsInFuture('2026-11-24', 'local', now)).toBe(false);
    expect(startsInFuture('2026-11-24', 'local', new Date('2026-11-23T09:59:59Z'))).toBe(true);
  });
});

describe('localDayOf', () => {
  it('is the calendar date of the local midnight as written, whatever its offset', () => {
    expect(localDayOf('2026-11-23T00:00:00+13:00')).toBe('2026-11-23');
    expect(localDayOf('2026-11-22T00:00:00-11:00')).toBe('2026-11-22');
  });
});
