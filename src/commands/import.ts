import { join } from 'node:path';
import type { Command } from 'commander';
import { exitCodeFor, messageOf } from '../errors.js';
import { basicAuthorization } from '../fetch/basic-auth.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import { firstPageUrl } from '../fetch/urls.js';
import { createLogger, useColor } from '../log/logger.js';
import { createImportProgress } from '../log/progress.js';
import { METRIC_NAMES, METRICS, type MetricName } from '../metrics/descriptors.js';
import { runPipeline, type UnitOutcome } from '../metrics/pipeline.js';
import { fetchUnit, unitLabel, type Unit } from '../metrics/unit.js';
import { describeValue, describeViolation } from '../metrics/validate.js';
import { resultEncoder } from '../output/format.js';
import { FileSink, StreamSink } from '../output/sinks.js';
import { ImportState, STATE_FILE_NAME, stateKey } from '../output/state.js';
import { resolveDays, utcDayBounds } from '../window/days.js';
import type { CommandContext } from './context.js';
import { addImportOptions, resolveImportConfig, type ImportConfig, type RawImportOptions } from './import-options.js';

const COMMANDS: readonly { name: string; metrics: readonly MetricName[]; summary: string }[] = [
  { name: 'unique-users', metrics: ['unique-users'], summary: 'import the Unique Users metric' },
  { name: 'avg-screen-time', metrics: ['avg-screen-time'], summary: 'import the Average Screen Time metric' },
  { name: 'traffic', metrics: ['traffic'], summary: 'import the Area Traffic metric' },
  { name: 'all', metrics: METRIC_NAMES, summary: 'import all three metrics in one run' },
];

function examples(name: string): string {
  return `
Examples:
  # yesterday (UTC), from cron; credentials from the environment
  $ area-metrics ${name} --base-url https://api.example.com
  # backfill a range into NDJSON files
  $ area-metrics ${name} --from 2026-11-01 --to 2026-11-07 -f ndjson -o ./data
  # every missed day since the last complete one
  $ area-metrics ${name} --catch-up
  # stream to another tool
  $ area-metrics ${name} --date 2026-11-20 -o - | jq -c .
`;
}

export function registerImportCommands(program: Command, context: CommandContext): void {
  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.summary).addHelpText('after', examples(spec.name));
    addImportOptions(command).action(async (raw: RawImportOptions) => {
      await runImport(spec.metrics, raw, context);
    });
  }
}

function planUnits(metrics: readonly MetricName[], days: readonly string[], storeCodes: readonly string[]): Unit[] {
  const stores: (string | undefined)[] = storeCodes.length > 0 ? [...storeCodes] : [undefined];
  return metrics.flatMap((name) =>
    days.flatMap((day) =>
      stores.map((storeCode) => ({ metric: METRICS[name], day, ...(storeCode === undefined ? {} : { storeCode }) })),
    ),
  );
}

async function runImport(metricNames: readonly MetricName[], raw: RawImportOptions, context: CommandContext): Promise<void> {
  if (raw.logFormat === 'json') {
    // A bad flag found while resolving the config is reported as JSON too (SPEC 2.7: every stderr line).
    const early = createLogger({ stream: context.stderr, format: 'json', level: 'error' });
    context.reportError = (message) => early.error(message);
  }
  const config = await resolveImportConfig(raw, context.env, metricNames.length);
  const secrets = config.credentials ? [config.credentials.clientSecret] : [];
  const progress = await createImportProgress(context.stderr, {
    format: config.logFormat,
    level: config.logLevel,
    secrets,
    color: useColor(context.stderr, context.env),
  });
  const { logger } = progress;
  context.reportError = (message) => logger.error(message);

  const statePath =
    config.statePath ?? (config.output.kind === 'files' ? join(config.output.dir, STATE_FILE_NAME) : undefined);
  const state = statePath === undefined ? undefined : await ImportState.load(statePath);
  const now = new Date();
  const days =
    config.window.kind === 'catch-up-pending'
      ? catchUpDays(metricNames, config, state, now)
      : resolveDays(config.window, now);
  const units = planUnits(metricNames, days, config.storeCodes);

  if (config.dryRun) {
    for (const unit of units) {
      const url = firstPageUrl(config.baseUrl, unit.metric.resource, {
        ...utcDayBounds(unit.day),
        pageSize: config.pageSize,
        ...(unit.storeCode === undefined ? {} : { storeCode: unit.storeCode }),
      });
      context.stdout.write(`GET ${url.href}\n`);
    }
    return;
  }
  if (units.length === 0) {
    progress.finish('nothing to import: every day through yesterday is already complete', { units: 0 }, true);
    return;
  }

  const credentials = config.credentials;
  if (!credentials) throw new Error('credentials are resolved for every run but --dry-run');
  const dispatcher = createDispatcher({ connections: config.concurrency + 2, timeoutMs: config.timeoutMs });
  const client = new HttpClient({
    dispatcher,
    timeoutMs: config.timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retries: config.retries },
    logger,
    signal: context.signal,
  });
  const headers = { authorization: basicAuthorization(credentials), accept: 'application/json' };
  const encoding = { format: config.format, shape: config.shape };
  const encode = resultEncoder(encoding);
  const sink = config.output.kind === 'stdout' ? new StreamSink(context.stdout, encoding) : new FileSink(config.output.dir, encoding);
  const dayTracker = new DayCompletion(units, config.storeCodes, state);

  const started = Date.now();
  // Counted as units are committed: the pipeline releases each unit's rows once it is written.
  let rows = 0;
  let outcomes: UnitOutcome[];
  try {
    outcomes = await runPipeline(units, {
      concurrency: config.concurrency,
      sink,
      signal: context.signal,
      fetch: (unit) =>
        fetchUnit(unit, {
          client,
          baseUrl: config.baseUrl,
          headers,
          pageSize: config.pageSize,
          onInvalid: config.onInvalid,
          encode,
          logger,
          onPage: (current, page, rows) => progress.page(unitLabel(current), page, rows),
        }),
      onOutcome: async (outcome) => {
        if (!outcome.ok) {
          logger.error(failureLine(outcome.unit, outcome.error), { unit: unitLabel(outcome.unit), exit_code: exitCodeFor(outcome.error) });
          await dayTracker.record(outcome);
          return;
        }
        const { data } = outcome;
        rows += data.rowCount;
        for (const warning of data.warnings) logger.warn(`${unitLabel(outcome.unit)}: ${warning}`);
        for (const rejected of data.rejected) {
          // Names the record and its value like the --on-invalid fail line: with -o - this line is all that is kept.
          const { store_code: storeCode } = (rejected.record ?? {}) as { store_code?: unknown };
          logger.warn(
            `${unitLabel(outcome.unit)}: rejected record (store_code ${describeValue(storeCode)}): ` +
              describeViolation(rejected),
          );
        }
        progress.unitDone(
          `${unitLabel(outcome.unit)}: ${data.rowCount} rows from ${data.count} results in ${data.pages} page(s)` +
            `${data.rejected.length ? `, ${data.rejected.length} rejected` : ''} -> ${outcome.destination}`,
          { unit: unitLabel(outcome.unit), rows: data.rowCount, results: data.count, pages: data.pages, rejected: data.rejected.length, warnings: data.warnings.length, destination: outcome.destination },
        );
        await dayTracker.record(outcome);
      },
    });
  } finally {
    await dispatcher.close();
  }

  const failed = outcomes.filter((outcome) => !outcome.ok);
  const succeeded = outcomes.flatMap((outcome) => (outcome.ok ? [outcome.data] : []));
  const rejected = succeeded.reduce((total, data) => total + data.rejected.length, 0);
  const warnings = succeeded.reduce((total, data) => total + data.warnings.length, 0);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary =
    `imported ${succeeded.length} of ${outcomes.length} units, ${rows} rows` +
    `${rejected ? `, ${rejected} rejected records` : ''}${warnings ? `, ${warnings} warnings` : ''} in ${seconds} s` +
    (failed.length ? `; ${failed.length} failed, first: ${unitLabel(failed[0]!.unit)}` : '');
  progress.finish(summary, { units: outcomes.length, succeeded: succeeded.length, failed: failed.length, rows, rejected, warnings, seconds: Number(seconds) }, failed.length === 0);
  // The run's exit code is that of the first failed unit in (metric, day, store) order (SPEC 2.6).
  const first = failed[0];
  if (first && !first.ok) context.exitCode = exitCodeFor(first.error);
}

/**
 * The one stderr line of a failed unit always names the unit (SPEC 2.6): errors raised per request (HTTP status,
 * network, malformed body) only know the URL, and text logs do not print the `unit` field.
 */
function failureLine(unit: Unit, error: unknown): string {
  const label = unitLabel(unit);
  const message = messageOf(error);
  return message.startsWith(`${label}:`) ? message : `${label}: ${message}`;
}

function catchUpDays(metricNames: readonly MetricName[], config: ImportConfig, state: ImportState | undefined, now: Date): string[] {
  if (config.window.kind !== 'catch-up-pending') return [];
  // Metrics may stand at different days; start from the one furthest behind so none is skipped.
  const lasts = metricNames.map((name) => state?.lastCompleteDay(stateKey(name, config.storeCodes)));
  const behind = lasts.some((last) => last === undefined) ? undefined : lasts.sort()[0];
  return resolveDays({ kind: 'catch-up', lastCompleteDay: behind, maxDays: config.window.maxDays }, now);
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
