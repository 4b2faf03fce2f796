import { describe, expect, it } from 'vitest';
import { AuthError, InterruptedError, OutputError, UnavailableError } from '../../src/errors.js';
import { METRICS } from '../../src/metrics/descriptors.js';
import { runPipeline, type UnitOutcome } from '../../src/import/pipeline.js';
import type { Unit, UnitData } from '../../src/metrics/unit.js';
import type { UnitSink } from '../../src/output/sinks.js';
import { unitDataOf } from '../helpers/unit-data.js';

const units: Unit[] = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05'].map((day) => ({
  metric: METRICS.traffic,
  day,
}));

/** A fetched unit with no rows. */
const data = (unit: Unit): UnitData => unitDataOf(unit, 0);

function recordingSink(): UnitSink & { committed: string[] } {
  const committed: string[] = [];
  return {
    committed,
    commit: async (unitData) => {
      committed.push(unitData.unit.day);
      return { changed: true };
    },
    describe: () => 'memory',
  };
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('runPipeline', () => {
  it('gives a sink that commits ahead each unit once it is fetched, and still records and reports them in plan order', async () => {
    // The first unit's fetch is slow and the second's commit waits for the third's: a sink that took them in plan
    // order one at a time would never finish.
    const started: string[] = [];
    let releaseSecond: () => void = () => {};
    const secondMayEnd = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    const sink: UnitSink = {
      commit: async ({ unit }) => {
        started.push(unit.day);
        if (unit.day === '2026-11-02') await secondMayEnd;
        if (unit.day === '2026-11-03') releaseSecond();
        return { changed: true };
      },
      describe: () => 'memory',
    };
    const recorded: string[] = [];
    const { outcomes } = await runPipeline(units, {
      concurrency: 5,
      sink,
      commitsAhead: true,
      fetch: async (unit) => {
        await delay(unit.day === '2026-11-01' ? 30 : 1);
        return data(unit);
      },
      record: async (outcome) => {
        recorded.push(outcome.unit.day);
        return outcome;
      },
    });
    expect(started.indexOf('2026-11-01')).toBeGreaterThan(started.indexOf('2026-11-03'));
    expect(recorded).toEqual(units.map(({ day }) => day));
    expect(outcomes.map((outcome) => [outcome.unit.day, outcome.ok])).toEqual(units.map(({ day }) => [day, true]));
  });

  it('commits in plan order whatever order the fetches finish in, within the concurrency', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const sink = recordingSink();
    const { outcomes } = await runPipeline(units, {
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
    const { outcomes } = await runPipeline(units, {
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

  it('an interrupt while the last unit is written is still an interrupt, though the sink finished it: never a clean end', async () => {
    const controller = new AbortController();
    const last = units.at(-1)?.day;
    const sink: UnitSink = {
      // A sink that does not listen to the signal (a database statement already past its cancel) writes the unit anyway.
      commit: async ({ unit }) => {
        if (unit.day === last) controller.abort(new InterruptedError('SIGTERM'));
        return { changed: true };
      },
      describe: () => 'memory',
    };
    const run = runPipeline(units, { concurrency: 2, sink, signal: controller.signal, fetch: async (unit) => data(unit) });
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    await expect(run).rejects.toMatchObject({ exitCode: 143 });
  });
  it.each([
    ['refused (disk full)', new OutputError('cannot write out/traffic/2026-11-02.csv: disk full (ENOSPC); free some space')],
    ['met a store unreachable after its retries', new UnavailableError('cannot write s3://b/traffic/2026-11-02.csv: unreachable')],
  ])('a unit whose write is %s stops the fetching: no unit after it is fetched or committed', async (_, full) => {
    const fetched: string[] = [];
    const committed: string[] = [];
    const { outcomes, stoppedBy } = await runPipeline(units, {
      concurrency: 1,
      sink: {
        commit: async (unitData) => {
          if (unitData.unit.day === '2026-11-02') throw full;
          committed.push(unitData.unit.day);
          return { changed: true };
        },
        describe: () => 'memory',
      },
      fetch: async (unit) => {
        fetched.push(unit.day);
        await delay(5);
        return data(unit);
      },
    });
    expect(outcomes.map((outcome) => [outcome.unit.day, outcome.ok])).toEqual([
      ['2026-11-01', true],
      ['2026-11-02', false],
    ]);
    expect(outcomes[1]).toMatchObject({ error: full });
    expect(stoppedBy).toBe('output');
    expect(committed).toEqual(['2026-11-01']);
    // At most the one unit already in flight when the output failed; never the rest of the plan.
    expect(fetched.length).toBeLessThanOrEqual(3);
    expect(fetched).not.toContain('2026-11-04');
    expect(fetched).not.toContain('2026-11-05');
  });

  it('a unit whose state cannot be recorded (disk full) is committed once, as failed, and stops the run', async () => {
    const seen: [string, boolean][] = [];
    const recorded: string[] = [];
    const full = new OutputError('cannot write out/.area-metrics-state.json: disk full (ENOSPC); free some space');
    const { outcomes, stoppedBy } = await runPipeline(units, {
      concurrency: 2,
      sink: recordingSink(),
      fetch: async (unit) => data(unit),
      record: async (outcome) => {
        recorded.push(outcome.unit.day);
        if (outcome.ok && outcome.unit.day === '2026-11-02') throw full;
        return outcome;
      },
      onOutcome: (outcome: UnitOutcome) => {
        seen.push([outcome.unit.day, outcome.ok]);
      },
    });
    // Recorded once and told once about 2026-11-02: as the failure it is, never first as written.
    expect(recorded).toEqual(['2026-11-01', '2026-11-02']);
    expect(seen).toEqual([
      ['2026-11-01', true],
      ['2026-11-02', false],
    ]);
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, false]);
    expect(outcomes[1]).toMatchObject({ error: full });
    expect(stoppedBy).toBe('output');
  });

  it('the first rejected credential halts the run: fetches in flight are aborted, none starts after, one failure is reported', async () => {
    const halt = new AbortController();
    const started: string[] = [];
    const seen: [string, boolean][] = [];
    const { outcomes, stoppedBy } = await runPipeline(units, {
      concurrency: 3,
      halt,
      sink: recordingSink(),
      fetch: async (unit) => {
        started.push(unit.day);
        if (unit.day === '2026-11-02') throw new AuthError('HTTP 401: credentials rejected');
        // The others wait until the halt aborts them, as a request in flight would.
        await new Promise((_resolve, reject) => halt.signal.addEventListener('abort', () => reject(halt.signal.reason as Error)));
        return data(unit);
      },
      onOutcome: (outcome) => {
        seen.push([outcome.unit.day, outcome.ok]);
      },
    });
    expect(started).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(seen).toEqual([['2026-11-02', false]]);
    expect(outcomes).toHaveLength(1);
    expect(stoppedBy).toBe('credentials');
  });

  it('any other error while recording a unit is a bug and is thrown', async () => {
    const bug = new TypeError('state is undefined');
    const run = runPipeline(units, {
      concurrency: 1,
      sink: recordingSink(),
      fetch: async (unit) => data(unit),
      record: () => {
        throw bug;
      },
    });
    await expect(run).rejects.toBe(bug);
  });
});
