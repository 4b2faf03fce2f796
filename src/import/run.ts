import type { VendorDownError } from '../fetch/outage.js';
import { runPipeline, type UnitOutcome } from '../metrics/pipeline.js';
import type { Unit, UnitData } from '../metrics/unit.js';
import type { UnitSink } from '../output/sinks.js';
import type { DayNote } from '../state/day-completion.js';

/**
 * The state's side of a run: the days asked for, then each unit recorded and its day judged, and at the end the days
 * never judged; the rows of the units recorded, per metric.
 */
export interface ImportDays {
  markAsked(): Promise<void>;
  record(outcome: UnitOutcome): Promise<DayNote[]>;
  endRun(): Promise<void>;
  readonly rowsByMetric: Readonly<Record<string, number>>;
}

/** Where a run's news goes, in plan order: each unit's final outcome, then what the judgement of its day says. */
export interface UnitReport {
  unit(outcome: UnitOutcome): void;
  days(notes: readonly DayNote[]): void;
}

export interface ImportParts {
  readonly fetch: (unit: Unit) => Promise<UnitData>;
  readonly sink: UnitSink;
  readonly days: ImportDays;
  readonly report: UnitReport;
  /** Units fetched at once. */
  readonly concurrency: number;
  readonly signal?: AbortSignal;
  /** Aborted at the first rejected credential; the fetches' HTTP client listens to it too. */
  readonly halt: AbortController;
}

/**
 * What decides the run's exit code: the first failed unit in plan order, else the vendor found down with no unit
 * failed first (a second wait beyond --max-wait, a second timeout in a row: the units are all left pending).
 */
export function runFailure(summary: Pick<ImportSummary, 'failures' | 'stopCause'>): unknown {
  return summary.failures[0]?.error ?? summary.stopCause;
}

export interface ImportSummary {
  readonly units: number;
  readonly succeeded: number;
  /** Units written whose bytes equal the file already there, left untouched. */
  readonly unchanged: number;
  /** Units never fetched or never written because the run stopped first. */
  readonly notTried: number;
  /** Why it stopped: the output failed (a full or read-only disk), the credentials were rejected, or the vendor is down. */
  readonly stoppedBy?: 'output' | 'credentials' | 'vendor-down';
  /** Why the vendor is down: its message is the line that names the cause. */
  readonly stopCause?: VendorDownError;
  readonly rows: number;
  readonly rowsByMetric: Readonly<Record<string, number>>;
  readonly rejected: number;
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
  const started = Date.now();
  const tally = { rows: 0, rejected: 0, unchanged: 0 };
  const notes = new Map<Unit, DayNote[]>();
  await parts.days.markAsked();
  const result = await runPipeline(units, {
    concurrency: parts.concurrency,
    sink: parts.sink,
    halt: parts.halt,
    ...(parts.signal ? { signal: parts.signal } : {}),
    fetch: parts.fetch,
    record: async (outcome) => {
      notes.set(outcome.unit, await parts.days.record(outcome));
      return outcome;
    },
    onOutcome: (outcome) => {
      if (outcome.ok) {
        const { data } = outcome;
        tally.rows += data.rowCount;
        tally.rejected += data.rejected.length;
        if (outcome.path !== undefined && !outcome.changed) tally.unchanged++;
      }
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
    succeeded: outcomes.length - failures.length,
    unchanged: tally.unchanged,
    notTried: units.length - outcomes.length,
    ...(result.stoppedBy === undefined ? {} : { stoppedBy: result.stoppedBy }),
    ...(result.stopCause === undefined ? {} : { stopCause: result.stopCause }),
    rows: tally.rows,
    rowsByMetric: { ...parts.days.rowsByMetric },
    rejected: tally.rejected,
    seconds: (Date.now() - started) / 1000,
    failures,
  };
}
