import { describe, expect, it } from 'vitest';
import { InterruptedError, UnavailableError } from '../../src/errors.js';
import { METRICS } from '../../src/metrics/descriptors.js';
import { runPipeline } from '../../src/metrics/pipeline.js';
import type { Unit, UnitData } from '../../src/metrics/unit.js';
import type { UnitSink } from '../../src/output/sinks.js';

const units: Unit[] = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05'].map((day) => ({
  metric: METRICS.traffic,
  day,
}));

function data(unit: Unit): UnitData {
  return { unit, count: 0, pages: 1, rowCount: 0, header: undefined, pieces: [], rejected: [], warnings: [], storeCodes: [], attempts: 1 };
}

function recordingSink(): UnitSink & { committed: string[] } {
  const committed: string[] = [];
  return {
    committed,
    commit: async (unitData) => {
      committed.push(unitData.unit.day);
    },
    describe: () => 'memory',
  };
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('runPipeline', () => {
  it('commits in plan order whatever order the fetches finish in, within the concurrency', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const sink = recordingSink();
    const outcomes = await runPipeline(units, {
      concurrency: 2,
      sink,
      fetch: async (unit) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await delay(unit.day.endsWith('1') ? 30 : 5);
        inFlight--;
        return data(unit);
      },
    });
    expect(sink.committed).toEqual(units.map((unit) => unit.day));
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(maxInFlight).toBe(2);
  });

  it('keeps going past a failed unit and reports it in order', async () => {
    const sink = recordingSink();
    const outcomes = await runPipeline(units, {
      concurrency: 3,
      sink,
      fetch: async (unit) => {
        if (unit.day === '2026-11-03') throw new UnavailableError('down');
        return data(unit);
      },
    });
    expect(sink.committed).toEqual(['2026-11-01', '2026-11-02', '2026-11-04', '2026-11-05']);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true, false, true, true]);
  });

  it('stops at an interrupt, commits nothing more, and rethrows it', async () => {
    const controller = new AbortController();
    const sink = recordingSink();
    const run = runPipeline(units, {
      concurrency: 1,
      sink,
      signal: controller.signal,
      fetch: async (unit) => {
        if (unit.day === '2026-11-02') {
          controller.abort(new InterruptedError('SIGTERM'));
          throw controller.signal.reason;
        }
        return data(unit);
      },
    });
    await expect(run).rejects.toMatchObject({ exitCode: 143 });
    expect(sink.committed).toEqual(['2026-11-01']);
  });
});
