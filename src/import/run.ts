import { runPipeline, type UnitOutcome } from './pipeline.js';
import type { RunStop } from './stop.js';
import type { RunTally } from './tally.js';
import type { Unit, UnitData } from '../metrics/unit.js';
import type { UnitSink } from '../output/sinks.js';
import type { DayNote } from './day-completion.js';

/** The state's side of a run: the days asked for, then each unit recorded and its day judged, and at the end the days never judged. */
export interface ImportDays {
  markAsked(): Promise<void>;
  record(outcome: UnitOutcome): Promise<DayNote[]>;
  endRun(): Promise<void>;
}

/** Where a run's news goes, in plan order: each unit's final outcome, then what the judgement of its day says. */
export interface UnitReport {
  unit(outcome: UnitOutcome): void;
  days(notes: readonly DayNote[]): void;
}

export interface ImportParts {
  readonly fetch: (unit: Unit) => Promise<UnitData>;
  readonly sink: UnitSink;
  /** The destination takes units as soon as they are fetched (its row says so). */
  readonly commitsAhead: boolean;
  readonly days: ImportDays;
  readonly report: UnitReport;
  /** Units fetched at once. */
  readonly concurrency: number;
  readonly signal?: AbortSignal;
  /** Aborted at the first rejected credential; the fetches' HTTP client listens to it too. */
  readonly halt: AbortController;
  /** The run's one count, fed here as units are committed. */
  readonly tally: RunTally;
}

/**
 * What decides the run's exit code: the first failed unit in plan order, else the vendor found down with no unit
 * failed first (a second wait beyond --max-wait, a second timeout in a row: the units are all left pending).
 */
export function runFailure(summary: Pick<ImportSummary, 'failures' | 'stopCause'>): unknown {
  return summary.failures[0]?.error ?? summary.stopCause;
}

export interface ImportSummary extends RunStop {
  readonly units: number;
  /** Units never fetched or never written because the run stopped first. */
  readonly notTried: number;
  /** What the committed units wrote. */
  readonly tally: RunTally;
  readonly seconds: number;
  /** In plan order; the first one decides the exit code. */
  readonly failures: readonly { readonly unit: Unit; readonly error: unknown }[];
}

/**
 * Imports the units through the ordered pipeline: the days asked for are marked first, each committed unit is recorded
 * (its day judged) and then reported, and the run is tallied. Failed units are reported, not thrown; an interrupt is
 * thrown.
 */
export async function runImport(units: readonly Unit[], parts: ImportParts): Promise<ImportSummary> {
  const started = performance.now();
  const { tally } = parts;
  const notes = new Map<Unit, DayNote[]>();
  await parts.days.markAsked();
  const result = await runPipeline(units, {
    concurrency: parts.concurrency,
    sink: parts.sink,
    commitsAhead: parts.commitsAhead,
    halt: parts.halt,
    ...(parts.signal ? { signal: parts.signal } : {}),
    fetch: parts.fetch,
    record: async (outcome) => {
      notes.set(outcome.unit, await parts.days.record(outcome));
      return outcome;
    },
    onOutcome: (outcome) => {
      tally.add(outcome);
      // The unit's own line first, then what its day's judgement says.
      parts.report.unit(outcome);
      parts.report.days(notes.get(outcome.unit) ?? []);
      notes.delete(outcome.unit);
    },
  }).finally(() =>
    // Days asked for and never judged: the run ended first. Best effort: the state may be what failed.
    parts.days.endRun().catch(() => {}),
  );
  const { outcomes } = result;
  const failures = outcomes.flatMap((outcome) => (outcome.ok ? [] : [{ unit: outcome.unit, error: outcome.error }]));
  return {
    units: units.length,
    notTried: units.length - outcomes.length,
    ...(result.stoppedBy === undefined ? {} : { stoppedBy: result.stoppedBy }),
    ...(result.stopCause === undefined ? {} : { stopCause: result.stopCause }),
    tally,
    seconds: (performance.now() - started) / 1000,
    failures,
  };
}
