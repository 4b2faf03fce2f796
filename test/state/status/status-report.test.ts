import { describe, expect, it } from 'vitest';
import type { KeyStatus } from '../../../src/state/status/status.js';
import { settleLines } from '../../../src/state/status/status-report.js';

function keyStatus(key: string, suspect: [string, string][]): KeyStatus {
  return {
    key,
    metric: key.replace(/\[.*$/, ''),
    firstDay: '2026-11-01',
    lastCompleteDay: '2026-11-10',
    daysBehind: 3,
    stores: 4,
    gaps: suspect,
    gapDays: suspect.length,
    pending: [],
    givenUp: [],
    accepted: [],
    suspect,
    behind: false,
  };
}

describe('how held days settle, in the text', () => {
  it('one line per suspect range, each with an accept command for exactly those days and the state flags', () => {
    const text = settleLines(
      [
        keyStatus('traffic', []),
        keyStatus('unique-users', [
          ['2026-11-05', '2026-11-05'],
          ['2026-11-08', '2026-11-09'],
        ]),
        keyStatus('avg-screen-time[store=S1,S2]', [['2026-11-07', '2026-11-07']]),
      ],
      ' -o /data/area-metrics',
    );
    expect(text.split('\n')).toEqual([
      'held: unique-users 2026-11-05 suspect: the next --catch-up asks again; if the numbers are right, `area-metrics accept unique-users --date 2026-11-05 -o /data/area-metrics` records it as final',
      'held: unique-users 2026-11-08..11-09 suspect: the next --catch-up asks again; if the numbers are right, `area-metrics accept unique-users --from 2026-11-08 --to 2026-11-09 -o /data/area-metrics` records it as final',
      // accept settles a metric's days, not a store selection's.
      'held: avg-screen-time[store=S1,S2] 2026-11-07 suspect: the next --catch-up asks again',
      '',
    ]);
    expect(settleLines([keyStatus('traffic', [])], '')).toBe('');
  });
});
