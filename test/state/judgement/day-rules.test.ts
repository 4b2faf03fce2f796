import { describe, expect, it } from 'vitest';
import { isPastSettleDays, shouldGiveUp } from '../../../src/state/judgement/day-rules.js';
import { daysFrom, today } from '../../../src/window/days.js';

describe('shouldGiveUp', () => {
  it('a day is given up once its window ended giveUpDays ago', () => {
    // The window of 2026-11-06 ended at 2026-11-07T00:00Z; 14 days later is 2026-11-21T00:00Z.
    expect(shouldGiveUp('2026-11-06', 14, new Date('2026-11-20T23:59:59Z'))).toBe(false);
    expect(shouldGiveUp('2026-11-06', 14, new Date('2026-11-21T00:00:00Z'))).toBe(true);
  });
});

describe('isPastSettleDays', () => {
  const now = new Date('2026-11-21T02:30:00Z');

  it('a day is settled once it is settleDays old (yesterday is 1 day old)', () => {
    expect(isPastSettleDays('2026-11-20', 3, now)).toBe(false);
    expect(isPastSettleDays('2026-11-19', 3, now)).toBe(false);
    expect(isPastSettleDays('2026-11-18', 3, now)).toBe(true);
    expect(isPastSettleDays('2026-11-20', 1, now)).toBe(true);
    expect(daysFrom('2026-11-18', '2026-11-21')).toBe(3);
    expect(today(now)).toBe('2026-11-21');
  });
});
