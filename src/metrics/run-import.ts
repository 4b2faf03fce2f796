import { exitCodeFor, messageOf } from '../errors.js';
import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { ImportProgress } from '../log/progress.js';
import type { OutputEncoding } from '../output/format.js';
import type { UnitSink } from '../output/sinks.js';
import { stateKey, type ImportState } from '../output/state.js';
import type { UtcDay } from '../window/days.js';
import { METRICS, type MetricName } from './descriptors.js';
import { runPipeline, type UnitOutcome } from './pipeline.js';
import { fetchUnit, unitLabel, type Unit } from './unit.js';
import { describeValue, describeViolation } from './check.js';

/** Units in (metric, day, store) order: the order they are committed in and the exit code is chosen by. */
export function planUnits(metrics: readonly MetricName[], days: readonly UtcDay[], storeCodes: readonly string[]): Unit[] {
  const stores: (string | undefined)[] = storeCodes.length > 0 ? [...storeCodes] : [undefined];
  return metrics.flatMap((name) =>
    days.flatMap((day) =>
      stores.map((storeCode) => ({ metric: METRICS[name], day, ...(storeCode === undefined ? {} : { storeCode }) })),
    ),
  );
}

/** The last complete day `--catch-up` resumes after: the metric furthest behind, so none is skipped. */
export function catchUpFrom(state: ImportState | undefined, metrics: readonly MetricName[], storeCodes: readonly string[]): UtcDay | undefined {
  const lasts = metrics.map((name) => state?.lastCompleteDay(stateKey(name, storeCodes)));
  return lasts.some((last) => last === undefined) ? undefined : [...lasts].sort()[0];
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
  readonly state?: ImportState;
  readonly signal?: AbortSignal;
  /** Told of each failed unit as soon as it is reported, in plan order (the run's exit code may be needed early). */
  readonly onFailure?: (unit: Unit, error: unknown) => void;
}

export interface ImportSummary {
  readonly units: number;
  readonly succeeded: number;
  /** Units never fetched or never written because the output failed first (a full or read-only disk). */
  readonly notTried: number;
  readonly rows: number;
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
  const dispatcher = createDispatcher({ connections: settings.concurrency + 2, timeoutMs: settings.timeoutMs });
  const client = new HttpClient({
    dispatcher,
    timeoutMs: settings.timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retries: settings.retries },
    logger,
    ...(io.signal ? { signal: io.signal } : {}),
  });
  const headers = { authorization: basicAuthorization(settings.credentials), accept: 'application/json' };
  const days = new DayCompletion(units, settings.storeCodes, io.state);
  const started = Date.now();
  let rows = 0;
  let rejected = 0;
  let warnings = 0;
  let outcomes: UnitOutcome[];
  try {
    outcomes = await runPipeline(units, {
      concurrency: settings.concurrency,
      sink: io.sink,
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
      onOutcome: async (outcome) => {
        const label = unitLabel(outcome.unit);
        if (!outcome.ok) {
          logger.error(failureLine(label, outcome.error), { unit: label, exit_code: exitCodeFor(outcome.error) });
          io.onFailure?.(outcome.unit, outcome.error);
        } else {
          const { data } = outcome;
          rows += data.rowCount;
          rejected += data.rejected.length;
          warnings += data.warnings.length;
          for (const warning of data.warnings) logger.warn(`${label}: ${warning}`);
          for (const record of data.rejected) {
            // Names the record and its value like the --on-invalid fail line: with -o - this line is all that is kept.
            const { store_code: storeCode } = (record.record ?? {}) as { store_code?: unknown };
            logger.warn(`${label}: rejected record (store_code ${describeValue(storeCode)}): ${describeViolation(record)}`);
          }
          io.progress.unitDone(
            `${label}: ${data.rowCount} rows from ${data.count} results in ${data.pages} page(s)` +
              `${data.rejected.length ? `, ${data.rejected.length} rejected` : ''} -> ${outcome.destination}`,
            { unit: label, rows: data.rowCount, results: data.count, pages: data.pages, rejected: data.rejected.length, warnings: data.warnings.length, destination: outcome.destination },
          );
        }
        await days.record(outcome);
      },
    });
  } finally {
    await dispatcher.close();
  }
  const failures = outcomes.flatMap((outcome) => (outcome.ok ? [] : [{ unit: outcome.unit, error: outcome.error }]));
  return {
    units: units.length,
    succeeded: outcomes.length - failures.length,
    notTried: units.length - outcomes.length,
    rows,
    rejected,
    warnings,
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
  return message.startsWith(`${label}:`) ? message : `${label}: ${message}`;
}

/**
 * Advances the state when every unit of a (metric, day) is complete, in plan order. A failed unit stops that metric's
 * state from moving further in this run, so `--catch-up` will try the failed day again.
 */
class DayCompletion {
  private readonly pending = new Map<string, number>();
  private readonly broken = new Set<string>();

  constructor(
    units: readonly Unit[],
    private readonly storeCodes: readonly string[],
    private readonly state: ImportState | undefined,
  ) {
    for (const unit of units) {
      const key = `${unit.metric.name} ${unit.day}`;
      this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    }
  }

  async record(outcome: UnitOutcome): Promise<void> {
    const { metric, day } = outcome.unit;
    if (!outcome.ok) {
      this.broken.add(metric.name);
      return;
    }
    const key = `${metric.name} ${day}`;
    const left = (this.pending.get(key) ?? 1) - 1;
    this.pending.set(key, left);
    if (left === 0 && !this.broken.has(metric.name)) {
      await this.state?.markComplete(stateKey(metric.name, this.storeCodes), day);
    }
  }
}
