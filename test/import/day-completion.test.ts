import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../src/metrics/descriptors.js';
import type { UnitOutcome } from '../../src/metrics/pipeline.js';
import { DayCompletion } from '../../src/import/day-completion.js';
import type { Unit } from '../../src/metrics/unit.js';
import { ImportState, STATE_FILE_NAME } from '../../src/output/state.js';
import type { DayMode } from '../../src/window/day-mode.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('day-completion-');

/** A complete unit whose results are the stores at these local midnights. */
function outcome(unit: Unit, midnights: readonly string[]): UnitOutcome {
  const storeCodes = midnights.map((_, index) => `S${index}`);
  return {
    unit,
    ok: true,
    destination: 'test',
    changed: true,
    data: {
      unit,
      count: midnights.length,
      pages: 1,
      rowCount: midnights.length,
      header: undefined,
      pieces: [],
      rejected: [],
      warnings: [],
      storeCodes,
      localMidnights: midnights.map((date) => Date.parse(date)),
      dropped: 0,
      attempts: 1,
      requests: 1,
      throttled: 0,
    },
  };
}

async function judge(mode: DayMode, day: string, now: string, midnights: readonly string[]) {
  const state = await ImportState.load(join(await tempDir(), STATE_FILE_NAME), { now: new Date(now), metricNames: ['traffic'], mode });
  const unit: Unit = { metric: METRICS.traffic, day, ...(mode === 'local' ? { mode } : {}) };
  const days = new DayCompletion([unit], { storeCodes: [], settleDays: 3, giveUpDays: 14, now: new Date(now), mode }, state);
  const notes = await days.record(outcome(unit, midnights));
  return { coverage: state.coverage('traffic'), notes };
}

describe('DayCompletion: a day is over only when its local days are', () => {
  it('a UTC day at 18:28 UTC the next day is pending not-over, with a note saying until when', async () => {
    // +05:45's local 2026-11-23 began at 18:15Z on the 22nd: within 25 h at 18:28Z on the 23rd. -05:00's began the 22nd.
    const { coverage, notes } = await judge('utc', '2026-11-22', '2026-11-23T18:28:00Z', ['2026-11-23T00:00:00+05:45', '2026-11-22T00:00:00-05:00']);
    expect(coverage.complete).toEqual([]);
    expect(coverage.pending).toEqual([{ day: '2026-11-22', status: { reason: 'not-over', stores: 2 } }]);
    expect(notes).toEqual([{ metric: 'traffic', day: '2026-11-22', kind: 'not-over', until: '2026-11-24T00:59:59Z', results: 2 }]);
  });

  it('the same day is complete once it is over, with no warning', async () => {
    const { coverage, notes } = await judge('utc', '2026-11-22', '2026-11-24T00:59:59Z', ['2026-11-23T00:00:00+05:45', '2026-11-22T00:00:00-05:00']);
    expect(coverage.complete).toEqual([['2026-11-22', '2026-11-22']]);
    expect(notes).toEqual([]);
  });

  it('a local day is not over until 13:00 UTC the next day, even with every store served', async () => {
    const midnights = ['2026-11-22T00:00:00+13:00', '2026-11-22T00:00:00-11:00'];
    const early = await judge('local', '2026-11-22', '2026-11-23T12:59:59Z', midnights);
    expect(early.coverage.pending).toEqual([{ day: '2026-11-22', status: { reason: 'not-over', stores: 2 } }]);
    expect(early.notes).toEqual([expect.objectContaining({ kind: 'not-over', until: '2026-11-23T13:00:00Z' })]);
    const over = await judge('local', '2026-11-22', '2026-11-23T13:00:00Z', midnights);
    expect(over.coverage.complete).toEqual([['2026-11-22', '2026-11-22']]);
  });
});
