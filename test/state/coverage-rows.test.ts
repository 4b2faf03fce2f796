import { describe, expect, it } from 'vitest';
import { coverageDays, coverageDaysOfText, storesOfKey, withLoads, type CoverageDay } from '../../src/state/coverage-rows.js';
import type { KeyCoverage } from '../../src/state/coverage.js';

const none: KeyCoverage = { complete: [], accepted: [], givenUp: [], pending: [] };

/** A day's status and reason, as the table of cases states it. */
const brief = (days: readonly CoverageDay[]): string[] =>
  days.map(({ day, status, reason }) => `${day} ${status}${reason ? ` ${reason}` : ''}`);

describe('coverageDays', () => {
  const cases: { name: string; coverage: KeyCoverage; expected: string[] }[] = [
    { name: 'no day', coverage: none, expected: [] },
    {
      name: 'a range of complete days, one a day',
      coverage: { ...none, complete: [['2026-10-30', '2026-11-01']] },
      expected: ['2026-10-30 complete', '2026-10-31 complete', '2026-11-01 complete'],
    },
    {
      name: 'accepted and given-up days',
      coverage: { ...none, accepted: [['2026-11-02', '2026-11-02']], givenUp: [['2026-11-01', '2026-11-01']] },
      expected: ['2026-11-01 given-up', '2026-11-02 accepted'],
    },
    {
      name: 'a suspect day is held, other pending days keep their reason',
      coverage: {
        ...none,
        pending: [
          { day: '2026-11-03', status: { reason: 'suspect', measure: 'sum', value: 0, allZero: true } },
          { day: '2026-11-04', status: { reason: 'not-over' } },
          { day: '2026-11-05', status: { reason: 'reopened' } },
        ],
      },
      expected: ['2026-11-03 held suspect', '2026-11-04 pending not-over', '2026-11-05 pending reopened'],
    },
    {
      name: 'every list at once, in day order',
      coverage: {
        complete: [
          ['2026-11-01', '2026-11-01'],
          ['2026-11-04', '2026-11-04'],
        ],
        accepted: [['2026-11-03', '2026-11-03']],
        givenUp: [['2026-11-05', '2026-11-05']],
        pending: [{ day: '2026-11-02', status: { reason: 'partly-published', missingStores: 1 } }],
      },
      expected: [
        '2026-11-01 complete',
        '2026-11-02 pending partly-published',
        '2026-11-03 accepted',
        '2026-11-04 complete',
        '2026-11-05 given-up',
      ],
    },
  ];
  for (const { name, coverage, expected } of cases) {
    it(name, () => {
      expect(brief(coverageDays('traffic', coverage))).toEqual(expected);
    });
  }

  it('names the metric and the stores of a --store key (null for the whole metric)', () => {
    const coverage = { ...none, complete: [['2026-11-01', '2026-11-01']] as [string, string][] };
    expect(coverageDays('unique-users[store=S1,S2]', coverage)[0]).toMatchObject({ metric: 'unique-users', stores: 'S1,S2' });
    expect(coverageDays('unique-users', coverage)[0]).toMatchObject({ metric: 'unique-users', stores: null });
    expect(storesOfKey('traffic[store=A]')).toBe('A');
  });
});

describe('coverageDaysOfText', () => {
  it('reads the day lists of a state text, whatever else its entries hold, key by key', () => {
    const text = JSON.stringify({
      version: 5,
      storeSets: {},
      metrics: {
        traffic: { complete: [['2026-11-01', '2026-11-02']], storeFigures: { '2026-11-01': ['x', 'AAAA'] }, stores: 3 },
        'avg-screen-time': {
          pending: { '2026-11-03': { reason: 'suspect', value: 9, measure: 'sum' } },
          givenUp: [['2026-11-01', '2026-11-01']],
        },
      },
    });
    expect(coverageDaysOfText(text).map(({ metric, day, status }) => `${metric} ${day} ${status}`)).toEqual([
      'avg-screen-time 2026-11-01 given-up',
      'avg-screen-time 2026-11-03 held',
      'traffic 2026-11-01 complete',
      'traffic 2026-11-02 complete',
    ]);
  });
});

describe('withLoads', () => {
  it('gives each day its load, null where none is known', () => {
    const days = coverageDays('traffic', { ...none, complete: [['2026-11-01', '2026-11-02']] });
    const at = new Date('2026-11-03T04:00:00Z');
    const rows = withLoads(days, (day) => (day.day === '2026-11-01' ? { rows: 12, loadedAt: at } : undefined));
    expect(rows.map(({ rows: count, loadedAt }) => [count, loadedAt])).toEqual([
      [12, at],
      [null, null],
    ]);
  });
});
