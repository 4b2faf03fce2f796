import { exitCodeFor, messageOf } from '../errors.js';
import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { Logger } from '../log/logger.js';
import type { ImportProgress } from '../log/progress.js';
import type { OutputEncoding } from '../output/format.js';
import type { UnitData as SinkUnitData, UnitSink } from '../output/sinks.js';
import { stateKey, type ImportState, type PendingDay } from '../output/state.js';
import { catchUpDays, isSettled, today, type CatchUpPlan, type UtcDay } from '../window/days.js';
import { METRICS, type MetricName } from './descriptors.js';
import { runPipeline, type UnitOutcome } from './pipeline.js';
import { fetchUnit, unitLabel, type Unit } from './unit.js';
import { describeValue, describeViolation } from './check.js';

/** One metric's days, in the order they are imported. */
export interface MetricDays {
  readonly metric: MetricName;
  readonly days: readonly UtcDay[];
}

/** Units in (metric, day, store) order: the order they are committed in and the exit code is chosen by. */
export function planUnits(plan: readonly MetricDays[], storeCodes: readonly string[]): Unit[] {
  const stores: (string | undefined)[] = storeCodes.length > 0 ? [...storeCodes] : [undefined];
  return plan.flatMap(({ metric, days }) =>
    days.flatMap((day) =>
      stores.map((storeCode) => ({ metric: METRICS[metric], day, ...(storeCode === undefined ? {} : { storeCode }) })),
    ),
  );
}

export interface MetricCatchUp extends CatchUpPlan {
  readonly metric: MetricName;
  readonly lastCompleteDay: UtcDay | undefined;
}

/**
 * `--catch-up` for each metric on its own, from its own last complete day: a metric with a gap is caught up even
 * when another has no state yet (which starts at yesterday).
 */
export function catchUpFrom(
  state: ImportState | undefined,
  metrics: readonly MetricName[],
  storeCodes: readonly string[],
  options: { readonly maxDays: number; readonly lookback: number },
  now: Date,
): MetricCatchUp[] {
  return metrics.map((metric) => {
    const lastCompleteDay = state?.lastCompleteDay(stateKey(metric, storeCodes));
    return { metric, lastCompleteDay, ...catchUpDays(lastCompleteDay, options, now) };
  });
}

/**
 * A unit without results writes no file: a header-only file would read as "zero visitors" to a loader, and the file
 * of an earlier import of that day (a look-back while the vendor republishes) stays as it was.
 */
export function withoutEmptyUnits(sink: UnitSink): UnitSink {
  // A complete unit's results are its pieces plus the records set aside.
  const empty = (data: SinkUnitData): boolean => data.pieces.length === 0 && data.rejected.length === 0;
  return {
    commit: (data, signal) => (empty(data) ? Promise.resolve() : sink.commit(data, signal)),
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
  /** A day this many days old is final even if stores are missing. */
  readonly settleDays: number;
}

export interface ImportIo {
  readonly sink: UnitSink;
  readonly encoding: OutputEncoding;
  readonly progress: ImportProgress;
  readonly state?: ImportState;
  readonly signal?: AbortSignal;
  /** Where the proxy variables are read (the command's environment, never the process's own). */
  readonly env: NodeJS.ProcessEnv;
  /** The clock that tells today and settled days apart (default: now). */
  readonly now?: Date;
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
  const dispatcher = createDispatcher({ connections: settings.concurrency + 2, timeoutMs: settings.timeoutMs, env: io.env });
  const client = new HttpClient({
    dispatcher,
    timeoutMs: settings.timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retries: settings.retries },
    logger,
    ...(io.signal ? { signal: io.signal } : {}),
  });
  const headers = { authorization: basicAuthorization(settings.credentials), accept: 'application/json' };
  const days = new DayCompletion(units, { storeCodes: settings.storeCodes, settleDays: settings.settleDays, now: io.now ?? new Date() }, io.state, logger);
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
  return message.startsWith(`${label}:`) ? message : `${label}: ${message}`;
}

interface DayRules {
  readonly storeCodes: readonly string[];
  readonly settleDays: number;
  readonly now: Date;
}

/** What the units of one (metric, day) brought, filled in as they are committed. */
interface DayTally {
  left: number;
  failed: boolean;
  results: number;
  readonly stores: Set<string>;
}

/** How many store codes a warning names before it says "...". */
const NAMED_STORES = 5;

/**
 * Decides, once every unit of a (metric, day) is committed (in plan order), whether the day is complete, and records
 * it in the state or says why not. A day is complete when its window is over, it has results, and no store of the
 * metric's last complete day (with `--store`: no store asked for) is missing; a day `settleDays` old is complete even
 * with stores missing, so a store that closed does not hold the state back. A day after the last complete one that is
 * not complete stops the metric there in this run, so `--catch-up` asks for it again and no gap is hidden.
 */
export class DayCompletion {
  /** Warnings logged about days (not published, partly published, not over). */
  warnings = 0;
  private readonly tallies = new Map<string, DayTally>();
  private readonly blocked = new Set<string>();

  constructor(
    units: readonly Unit[],
    private readonly rules: DayRules,
    private readonly state: ImportState | undefined,
    private readonly logger: Logger,
  ) {
    for (const unit of units) {
      const key = `${unit.metric.name} ${unit.day}`;
      const tally = this.tallies.get(key) ?? { left: 0, failed: false, results: 0, stores: new Set<string>() };
      tally.left++;
      this.tallies.set(key, tally);
    }
  }

  async record(outcome: UnitOutcome): Promise<void> {
    const { metric, day } = outcome.unit;
    const tally = this.tallies.get(`${metric.name} ${day}`);
    if (tally === undefined) return;
    if (outcome.ok) {
      tally.results += outcome.data.count;
      for (const code of outcome.data.storeCodes) tally.stores.add(code);
    } else {
      tally.failed = true;
    }
    if (--tally.left === 0) await this.finishDay(metric.name, day, tally);
  }

  private async finishDay(metric: MetricName, day: UtcDay, tally: DayTally): Promise<void> {
    const key = stateKey(metric, this.rules.storeCodes);
    const last = this.state?.lastCompleteDay(key);
    const label = `${metric} ${day}`;
    if (last !== undefined && day <= last) {
      // Already complete (a look-back or a backfill): the state never moves backwards.
      if (!tally.failed && tally.results === 0) this.warn(`${label}: no results on this re-import; the file of the earlier import is kept`);
      return;
    }
    if (tally.failed) {
      // The failure has been logged with its unit and decides the exit code; later days must not hide it.
      this.blocked.add(metric);
      return;
    }
    if (day >= today(this.rules.now)) {
      this.warn(`${label}: today (UTC) is not over yet; imported what there is, not recorded complete`);
      return this.pending(metric, key, day, { reason: 'not-over', stores: tally.stores.size });
    }
    if (tally.results === 0) {
      this.warn(`${label}: no results: the vendor has not published this day yet; nothing written, not recorded complete; the next --catch-up asks again`);
      return this.pending(metric, key, day, { reason: 'not-published', stores: 0 });
    }
    const expected = this.rules.storeCodes.length > 0 ? this.rules.storeCodes : (this.state?.storeCodes(key) ?? []);
    const missing = expected.filter((code) => !tally.stores.has(code));
    if (missing.length > 0) {
      const named = `${missing.slice(0, NAMED_STORES).join(', ')}${missing.length > NAMED_STORES ? ', ...' : ''}`;
      const what = `${missing.length} of ${expected.length} stores${this.rules.storeCodes.length > 0 ? ' asked for' : ' of the last complete day'} missing (${named})`;
      if (!isSettled(day, this.rules.settleDays, this.rules.now)) {
        this.warn(`${label}: partly published: ${what}; file written with ${tally.stores.size} store${tally.stores.size === 1 ? '' : 's'}, not recorded complete; the next --catch-up asks again`);
        return this.pending(metric, key, day, { reason: 'partial', missingStores: missing.length, stores: tally.stores.size });
      }
      this.warn(`${label}: ${what}; recorded complete anyway: the day is at least --settle-days ${this.rules.settleDays} days old`);
    }
    if (this.blocked.has(metric)) return;
    await this.state?.markComplete(key, day, [...tally.stores]);
  }

  private async pending(metric: MetricName, key: string, day: UtcDay, status: PendingDay): Promise<void> {
    this.blocked.add(metric);
    await this.state?.markPending(key, day, status);
  }

  private warn(line: string): void {
    this.warnings++;
    this.logger.warn(line);
  }
}
