import { exitCodeFor, messageOf } from '../errors.js';
import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { ImportProgress } from '../log/progress.js';
import type { OutputEncoding } from '../output/format.js';
import type { UnitData as SinkUnitData, UnitSink } from '../output/sinks.js';
import type { DayCompletion } from '../state/day-completion.js';
import type { UtcDay } from '../window/days.js';
import type { DayMode } from '../window/day-mode.js';
import { METRICS, type MetricName } from './descriptors.js';
import { runPipeline, type PipelineResult } from './pipeline.js';
import { fetchUnit, unitLabel, type Unit } from './unit.js';
import { describeValue, describeViolation } from './check.js';

/** One metric's days, in the order they are imported. */
export interface MetricDays {
  readonly metric: MetricName;
  readonly days: readonly UtcDay[];
}

/** Units in (metric, day, store) order: the order they are committed in and the exit code is chosen by. */
export function planUnits(plan: readonly MetricDays[], storeCodes: readonly string[], mode: DayMode = 'utc'): Unit[] {
  const stores: (string | undefined)[] = storeCodes.length > 0 ? [...storeCodes] : [undefined];
  return plan.flatMap(({ metric, days }) =>
    days.flatMap((day) =>
      stores.map((storeCode) => ({ metric: METRICS[metric], day, ...(mode === 'utc' ? {} : { mode }), ...(storeCode === undefined ? {} : { storeCode }) })),
    ),
  );
}

/**
 * A unit without results writes no file: a header-only file would read as "zero visitors" to a loader, and the file
 * of an earlier import of that day (a look-back while the vendor republishes) stays as it was.
 */
export function withoutEmptyUnits(sink: UnitSink): UnitSink {
  // A complete unit's results are its pieces plus the records set aside.
  const empty = (data: SinkUnitData): boolean => data.pieces.length === 0 && data.rejected.length === 0;
  return {
    commit: (data, signal) => (empty(data) ? Promise.resolve({ changed: false }) : sink.commit(data, signal)),
    describe: (data) => (empty(data) ? 'nothing written (no results)' : sink.describe(data)),
  };
}

export interface ImportSettings {
  readonly baseUrl: URL;
  readonly credentials: ClientCredentials;
  readonly storeCodes: readonly string[];
  readonly pageSize: number;
  readonly concurrency: number;
  readonly retries: number;
  readonly timeoutMs: number;
  readonly onInvalid: 'fail' | 'skip';
}

export interface ImportIo {
  readonly sink: UnitSink;
  readonly encoding: OutputEncoding;
  readonly progress: ImportProgress;
  /** Judges and records each day as its units are committed (the composition root builds it with the state). */
  readonly days: DayCompletion;
  readonly signal?: AbortSignal;
  /** Where the proxy variables are read (the command's environment, never the process's own). */
  readonly env: NodeJS.ProcessEnv;
  /** Told of each failed unit as soon as it is reported, in plan order (the run's exit code may be needed early). */
  readonly onFailure?: (unit: Unit, error: unknown) => void;
}

export interface ImportSummary {
  readonly units: number;
  readonly succeeded: number;
  /** Units written whose bytes equal the file already there, left untouched. */
  readonly unchanged: number;
  /** Units never fetched or never written because the run stopped first. */
  readonly notTried: number;
  /** Why it stopped: the output failed (a full or read-only disk), or the credentials were rejected. */
  readonly stoppedBy?: 'output' | 'credentials';
  readonly rows: number;
  readonly rowsByMetric: Readonly<Record<string, number>>;
  readonly rejected: number;
  readonly warnings: number;
  readonly seconds: number;
  /** In plan order; the first one decides the exit code. */
  readonly failures: readonly { readonly unit: Unit; readonly error: unknown }[];
}

/**
 * Imports the units: one connection pool, one HTTP client, the ordered pipeline, a log line per unit (failures name
 * the unit) and the state advanced day by day. Failed units are reported, not thrown; an interrupt is thrown.
 */
export async function runImport(units: readonly Unit[], settings: ImportSettings, io: ImportIo): Promise<ImportSummary> {
  const { logger } = io.progress;
  const { days } = io;
  // Aborted at the first rejected credential, so no further request carries them.
  const halt = new AbortController();
  const dispatcher = createDispatcher({ connections: settings.concurrency + 2, timeoutMs: settings.timeoutMs, env: io.env });
  const client = new HttpClient({
    dispatcher,
    timeoutMs: settings.timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retries: settings.retries },
    logger,
    signal: io.signal ? AbortSignal.any([io.signal, halt.signal]) : halt.signal,
  });
  const headers = { authorization: basicAuthorization(settings.credentials), accept: 'application/json' };
  const started = Date.now();
  let rows = 0;
  let rejected = 0;
  let warnings = 0;
  let unchanged = 0;
  let result: PipelineResult;
  try {
    await days.markAsked();
    result = await runPipeline(units, {
      concurrency: settings.concurrency,
      sink: io.sink,
      halt,
      ...(io.signal ? { signal: io.signal } : {}),
      fetch: (unit) =>
        fetchUnit(unit, {
          client,
          baseUrl: settings.baseUrl,
          headers,
          pageSize: settings.pageSize,
          onInvalid: settings.onInvalid,
          encoding: io.encoding,
          logger,
          onPage: (current, page, rowsSoFar) => io.progress.page(unitLabel(current), page, rowsSoFar),
        }),
      record: (outcome) => days.record(outcome),
      onOutcome: (outcome) => {
        const label = unitLabel(outcome.unit);
        if (!outcome.ok) {
          logger.error(failureLine(label, outcome.error), { unit: label, exit_code: exitCodeFor(outcome.error) });
          io.onFailure?.(outcome.unit, outcome.error);
        } else {
          const { data } = outcome;
          rows += data.rowCount;
          rejected += data.rejected.length;
          warnings += data.warnings.length;
          if (outcome.path !== undefined && !outcome.changed) unchanged++;
          for (const warning of data.warnings) logger.warn(`${label}: ${warning}`);
          for (const record of data.rejected) {
            // Names the record and its value like the --on-invalid fail line: with -o - this line is all that is kept.
            const { store_code: storeCode } = (record.record ?? {}) as { store_code?: unknown };
            logger.warn(`${label}: rejected record (store_code ${describeValue(storeCode)}): ${describeViolation(record)}`);
          }
          const kept = outcome.path !== undefined && !outcome.changed ? ' (unchanged)' : '';
          io.progress.unitDone(
            `${label}: ${data.rowCount} rows from ${data.count} results in ${data.pages} page(s)` +
              `${data.dropped ? ` (${data.dropped} of the neighbouring local days left out)` : ''}` +
              `${data.rejected.length ? `, ${data.rejected.length} rejected` : ''} -> ${outcome.destination}${kept}`,
            {
              unit: label,
              rows: data.rowCount,
              results: data.count,
              pages: data.pages,
              rejected: data.rejected.length,
              warnings: data.warnings.length,
              destination: outcome.destination,
              ...(outcome.path === undefined ? {} : { path: outcome.path }),
              changed: outcome.changed,
            },
          );
        }
        days.logNotes();
      },
    });
  } finally {
    await dispatcher.close();
    // Best effort: the state may be what failed.
    await days.endRun().catch(() => {});
  }
  const { outcomes } = result;
  const failures = outcomes.flatMap((outcome) => (outcome.ok ? [] : [{ unit: outcome.unit, error: outcome.error }]));
  return {
    units: units.length,
    succeeded: outcomes.length - failures.length,
    unchanged,
    notTried: units.length - outcomes.length,
    ...(result.stoppedBy === undefined ? {} : { stoppedBy: result.stoppedBy }),
    rows,
    rowsByMetric: { ...days.rowsByMetric },
    rejected,
    warnings: warnings + days.warnings,
    seconds: (Date.now() - started) / 1000,
    failures,
  };
}

/**
 * The one stderr line of a failed unit always names the unit: errors raised per request (HTTP status,
 * network, malformed body) only know the URL, and text logs do not print the `unit` field.
 */
function failureLine(label: string, error: unknown): string {
  const message = messageOf(error);
  // A request's errors start with the unit's label and page (`traffic 2026-11-20 page 2: ...`).
  return message.startsWith(`${label}:`) || message.startsWith(`${label} page `) ? message : `${label}: ${message}`;
}
