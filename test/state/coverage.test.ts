import { describe, expect, it } from 'vitest';
import { firstKnownDay, gapDays, isFinal, latestFinal, latestSettled, type KeyCoverage } from '../../src/state/coverage.js';

const coverage: KeyCoverage = {
  complete: [
    ['2026-11-01', '2026-11-03'],
    ['2026-11-06', '2026-11-07'],
  ],
  accepted: [['2026-11-05', '2026-11-05']],
  givenUp: [['2026-11-09', '2026-11-09']],
  pending: [
    { day: '2026-10-31', status: { reason: 'asked' } },
    { day: '2026-11-04', status: { reason: 'not-published', stores: 0 } },
    { day: '2026-11-08', status: { reason: 'not-over', stores: 2 } },
  ],
};

describe('coverage', () => {
  it('final is complete or accepted; latest final ignores given-up days, latest settled counts them', () => {
    expect(isFinal(coverage, '2026-11-05')).toBe(true);
    expect(isFinal(coverage, '2026-11-09')).toBe(false);
    expect(latestFinal(coverage)).toBe('2026-11-07');
    expect(latestSettled(coverage)).toBe('2026-11-09');
    expect(firstKnownDay(coverage)).toBe('2026-10-31');
  });

  it('gaps are the days from the first known to the latest final that are not final', () => {
    expect(gapDays(coverage)).toEqual(['2026-10-31', '2026-11-04']);
    expect(gapDays({ complete: [], accepted: [], givenUp: [], pending: [{ day: '2026-11-04', status: { reason: 'asked' } }] })).toEqual([]);
  });
});
