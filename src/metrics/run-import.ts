import { exitCodeFor, messageOf } from '../errors.js';
import { basicAuthorization, type ClientCredentials } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import type { Logger } from '../log/logger.js';
import type { ImportProgress } from '../log/progress.js';
import type { OutputEncoding } from '../output/format.js';
import type { UnitData as SinkUnitData, UnitSink } from '../output/sinks.js';
import { stateKey, type ImportState } from '../output/state.js';
import { daysOfRanges } from '../window/day-ranges.js';
import { catchUpDays, isSettled, shouldGiveUp, type CatchUpPlan, type UtcDay } from '../window/days.js';
import { inItsDay, isNotOver, overAt, type DayMode } from '../window/day-mode.js';
import { METRICS, type MetricName } from './descriptors.js';
import { runPipeline, type PipelineResult, type UnitOutcome } from './pipeline.js';
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

export interface MetricCatchUp extends CatchUpPlan {
  readonly metric: MetricName;
}

/**
 * `--catch-up` for each metric on its own, from its own coverage: its pending days and the days after its last settled
 * one. A metric with a gap is caught up even when another has no state yet (which starts at yesterday).
 */
export function catchUpFrom(
  state: ImportState | undefined,
  metrics: readonly MetricName[],
  storeCodes: readonly string[],
  options: { readonly maxDays: number; readonly lookback: number },
  now: Date,
  mode: DayMode = 'utc',
): MetricCatchUp[] {
  return metrics.map((metric) => {
    const coverage = state?.coverage(stateKey(metric, storeCodes));
    const settled = [...(coverage?.complete ?? []), ...(coverage?.accepted ?? []), ...(coverage?.givenUp ?? [])].map(([, last]) => last).sort();
    return {
      metric,
      ...catchUpDays(
        {
          complete: daysOfRanges(coverage?.complete ?? []),
          settledThrough: settled.at(-1),
          pending: (coverage?.pending ?? []).map(({ day }) => day),
        },
        options,
        now,
        mode,
      ),
    };
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
  /** A day this many days old is final even if stores are missing. */
  readonly settleDays: number;
  /** A day still unpublished this many days after its window ended is given up. */
  readonly giveUpDays: number;
  /** UTC days (the default) or store-local days. */
  readonly dayMode?: DayMode;
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
  /** Told of each unit's final outcome, in plan order (the run manifest and lineage keep them). */
  readonly onUnit?: (outcome: UnitOutcome) => void;
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
  const now = io.now ?? new Date();
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
  const rules = { storeCodes: settings.storeCodes, settleDays: settings.settleDays, giveUpDays: settings.giveUpDays, now, mode: settings.dayMode ?? 'utc' };
  const days = new DayCompletion(units, rules, io.state, logger);
  const started = Date.now();
  let rows = 0;
  let rejected = 0;
  let warnings = 0;
  let unchanged = 0;
  const rowsByMetric: Record<string, number> = {};
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
      settle: (outcome) => days.settle(outcome),
      onOutcome: (outcome) => {
        io.onUnit?.(outcome);
        const label = unitLabel(outcome.unit);
        if (!outcome.ok) {
          logger.error(failureLine(label, outcome.error), { unit: label, exit_code: exitCodeFor(outcome.error) });
          io.onFailure?.(outcome.unit, outcome.error);
        } else {
          const { data } = outcome;
          rows += data.rowCount;
          rowsByMetric[data.unit.metric.name] = (rowsByMetric[data.unit.metric.name] ?? 0) + data.rowCount;
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
    rowsByMetric,
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

interface DayRules {
  readonly storeCodes: readonly string[];
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly now: Date;
  readonly mode: DayMode;
}

/** What the units of one (metric, day) brought, filled in as they are committed. */
interface DayTally {
  left: number;
  failed: boolean;
  results: number;
  /** Results whose local day has not ended at the run's clock. */
  inTheirDay: number;
  readonly stores: Set<string>;
}

/** How many store codes a warning names before it says "...". */
const NAMED_STORES = 5;

/**
 * Judges each (metric, day) once every unit of it is committed (in plan order), and records the judgement in the
 * state: complete when its window is over, it has results, and no store of the metric's latest complete day (with
 * `--store`: no store asked for) is missing; a day `settleDays` old is complete even with stores missing, so a store
 * that closed does not hold the state back. Otherwise the day is pending with its reason, and a day still unpublished
 * `giveUpDays` after its window ended is given up, with one warning. A day already final stays final. Each day is
 * judged on its own: a pending day never holds later days back.
 */
export class DayCompletion {
  /** Warnings logged about days (not published, partly published, not over, given up). */
  warnings = 0;
  private readonly tallies = new Map<string, DayTally>();
  private notes: string[] = [];

  constructor(
    private readonly units: readonly Unit[],
    private readonly rules: DayRules,
    private readonly state: ImportState | undefined,
    private readonly logger: Logger,
  ) {
    for (const unit of units) {
      const key = `${unit.metric.name} ${unit.day}`;
      const tally = this.tallies.get(key) ?? { left: 0, failed: false, results: 0, inTheirDay: 0, stores: new Set<string>() };
      tally.left++;
      this.tallies.set(key, tally);
    }
  }

  /** Before any request: the days of the run are pending until judged, so an interrupted run leaves them pending. */
  async markAsked(): Promise<void> {
    const asked = new Map<string, { key: string; day: UtcDay }>();
    for (const unit of this.units) {
      const key = stateKey(unit.metric.name, this.rules.storeCodes);
      asked.set(`${key} ${unit.day}`, { key, day: unit.day });
    }
    await this.state?.markAsked([...asked.values()]);
  }

  /** Tallies the unit and, when it is its day's last, judges and records the day; returns the unit's final outcome. */
  async settle(outcome: UnitOutcome): Promise<UnitOutcome> {
    const { metric, day } = outcome.unit;
    const tally = this.tallies.get(`${metric.name} ${day}`);
    if (tally === undefined) return outcome;
    if (outcome.ok) {
      tally.results += outcome.data.count - outcome.data.dropped;
      for (const code of outcome.data.storeCodes) tally.stores.add(code);
      for (const midnight of outcome.data.localMidnights) if (inItsDay(midnight, this.rules.now)) tally.inTheirDay++;
    } else {
      tally.failed = true;
    }
    if (--tally.left === 0) await this.finishDay(metric.name, day, tally);
    return outcome;
  }

  /** Logs what the last `settle` had to say about its day (after the unit's own line). */
  logNotes(): void {
    for (const note of this.notes) this.logger.warn(note);
    this.notes = [];
  }

  private async finishDay(metric: MetricName, day: UtcDay, tally: DayTally): Promise<void> {
    const key = stateKey(metric, this.rules.storeCodes);
    const label = `${metric} ${day}`;
    if (this.state?.isFinal(key, day)) {
      // Already complete or accepted (a look-back or a backfill): a final day stays final.
      if (!tally.failed && tally.results === 0) this.warn(`${label}: no results on this re-import; the file of the earlier import is kept`);
      return;
    }
    if (tally.failed) {
      // The failure has been logged with its unit and decides the exit code; the day waits for the next run.
      if (!this.state?.isGivenUp(key, day)) await this.state?.markPending(key, day, { reason: 'failed' });
      return;
    }
    if (isNotOver(day, this.rules.mode, this.rules.now)) {
      // Every local day the window can hold must have ended: until then a store's figures may still change.
      const until = new Date(overAt(day, this.rules.mode)).toISOString().replace('.000Z', 'Z');
      this.warn(
        `${label}: not over until ${until}, when every store's local day in it has ended (${tally.inTheirDay} of ${tally.stores.size} ` +
          `store${tally.stores.size === 1 ? '' : 's'} of its results still in their day); imported what there is, not recorded complete; the next --catch-up asks again`,
      );
      await this.state?.markPending(key, day, { reason: 'not-over', stores: tally.stores.size });
      return;
    }
    if (tally.results === 0) {
      if (this.state?.isGivenUp(key, day)) return;
      if (shouldGiveUp(day, this.rules.giveUpDays, this.rules.now)) {
        this.warn(
          `${label}: still not published ${this.rules.giveUpDays} days after its window ended (--give-up-days ${this.rules.giveUpDays}): given up, ` +
            `--catch-up no longer asks for it; \`area-metrics accept ${metric} --date ${day}\` settles it, \`reopen\` asks again`,
        );
        await this.state?.markGivenUp(key, day);
        return;
      }
      this.warn(`${label}: no results: the vendor has not published this day yet; nothing written, not recorded complete; the next --catch-up asks again`);
      await this.state?.markPending(key, day, { reason: 'not-published', stores: 0 });
      return;
    }
    const expected = this.rules.storeCodes.length > 0 ? this.rules.storeCodes : (this.state?.storeCodes(key) ?? []);
    const missing = expected.filter((code) => !tally.stores.has(code));
    if (missing.length > 0) {
      const named = `${missing.slice(0, NAMED_STORES).join(', ')}${missing.length > NAMED_STORES ? ', ...' : ''}`;
      const what = `${missing.length} of ${expected.length} stores${this.rules.storeCodes.length > 0 ? ' asked for' : ' of the latest complete day'} missing (${named})`;
      if (!isSettled(day, this.rules.settleDays, this.rules.now)) {
        this.warn(`${label}: partly published: ${what}; file written with ${tally.stores.size} store${tally.stores.size === 1 ? '' : 's'}, not recorded complete; the next --catch-up asks again`);
        await this.state?.markPending(key, day, { reason: 'partly-published', missingStores: missing.length, stores: tally.stores.size });
        return;
      }
      this.warn(`${label}: ${what}; recorded complete anyway: the day is at least --settle-days ${this.rules.settleDays} days old`);
    }
    await this.state?.markComplete(key, day, [...tally.stores]);
  }

  private warn(line: string): void {
    this.warnings++;
    this.notes.push(line);
  }
}
