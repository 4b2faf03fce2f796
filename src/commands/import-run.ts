import { dirname, join } from 'node:path';
import { exitCodeFor, messageOf } from '../errors.js';
import { createLogger, useColor } from '../log/logger.js';
import { createImportProgress, type ImportProgress } from '../log/progress.js';
import { METRIC_NAMES, type MetricName } from '../metrics/descriptors.js';
import { catchUpFrom, planUnits, runImport, withoutEmptyUnits, type ImportSummary, type MetricDays } from '../metrics/run-import.js';
import { unitFirstPageUrl, unitLabel, type Unit } from '../metrics/unit.js';
import { tempFileFolders, type Layout } from '../output/layout.js';
import { RUNS_FOLDER } from '../output/run-manifest.js';
import { checkWritableFolder } from '../output/atomic-file.js';
import { isObjectUrl } from '../output/object-location.js';
import { ObjectSink } from '../output/object-sink.js';
import { FileSink, StreamSink, type UnitSink } from '../output/sinks.js';
import { ImportState } from '../output/state.js';
import { createRedactor } from '../redact.js';
import { removeStaleTempFiles } from '../output/stale-temp.js';
import { describeRange, rangesOfDays } from '../window/day-ranges.js';
import { resolveDays, type UtcDay } from '../window/days.js';
import { VERSION } from '../version.js';
import { clockOf } from './clock.js';
import type { CommandContext } from './context.js';
import { resolveImportConfig, type ImportConfig } from './import-options.js';
import type { CollectedOptions } from './options.js';
import { RunRecords } from './run-records.js';
import { awsCredentialsIn, ObjectStores, stateStorageFor, stateUrlOf } from './state-location.js';

/** Runs one import command: `metric` names the metric, or `all` of them. */
export async function runImportCommand(commandName: string, metric: MetricName | 'all', raw: CollectedOptions, context: CommandContext): Promise<void> {
  const metricNames = metric === 'all' ? METRIC_NAMES : [metric];
  if (raw.logFormat === 'json') {
    // A bad flag found while resolving the config is reported as JSON too (with --log-format json every stderr line is JSON).
    const early = createLogger({ stream: context.stderr, format: 'json', level: 'error' });
    context.reportError = (message) => early.error(message);
  }
  const config = await resolveImportConfig(raw, context.env, metricNames.length);
  const credentials = [
    ...(config.credentials ? [{ clientId: config.credentials.clientId, secret: config.credentials.clientSecret }] : []),
    ...awsCredentialsIn(context.env),
    ...(config.lineage?.apiKey === undefined ? [] : [{ secret: config.lineage.apiKey }]),
  ];
  const progress = await createImportProgress(context.stderr, {
    format: config.logFormat,
    level: config.logLevel,
    credentials,
    color: useColor(context.stderr, context.env),
  });
  context.redact = createRedactor(credentials);
  context.reportError = (message) => progress.logger.error(message);

  const stores = new ObjectStores({
    env: context.env,
    forcePathStyle: config.s3ForcePathStyle,
    retries: config.retries,
    timeoutMs: config.timeoutMs,
    logger: progress.logger,
  });
  try {
    await importInto(stores, commandName, metricNames, config, progress, context);
  } finally {
    // The SDK keeps connections open; the process must be free to end.
    stores.close();
  }
}

async function importInto(
  stores: ObjectStores,
  commandName: string,
  metricNames: readonly MetricName[],
  config: ImportConfig,
  progress: ImportProgress,
  context: CommandContext,
): Promise<void> {
  const now = clockOf(context.env);
  const output = config.output.kind === 'files' ? config.output.dir : config.output.kind === 'objects' ? config.output.url : '-';
  const stateUrl = stateUrlOf(output, config.statePath);
  // Reading the state object is also the first call to the store: missing credentials, a wrong bucket or region fail
  // here, before any download. A dry run of named days needs no store at all.
  const skipObjectState = config.dryRun && config.window.kind !== 'catch-up' && stateUrl !== undefined && isObjectUrl(stateUrl);
  const state =
    stateUrl === undefined || skipObjectState
      ? undefined
      : await ImportState.load(await stateStorageFor(stateUrl, stores), {
          now,
          metricNames: METRIC_NAMES,
          mode: config.dayMode,
          // Stdout has no files to lay out: its state (--state) keeps whatever layout it has.
          ...(config.output.kind === 'stdout' ? {} : { layout: config.layout }),
        });
  const statePath = stateUrl !== undefined && !isObjectUrl(stateUrl) ? stateUrl : undefined;
  const { plan, cuts } = planDays(metricNames, config, state, now);
  const units = planUnits(plan, config.storeCodes, config.dayMode);

  if (config.dryRun) {
    for (const unit of units) context.stdout.write(`GET ${unitFirstPageUrl(unit, config.baseUrl, config.pageSize).href}\n`);
    return;
  }
  // The first line of every run: which run this is, so a log appended to night after night can be read by night.
  const shownOutput = output === '-' ? 'stdout' : output;
  progress.logger.info(`area-metrics ${VERSION} ${commandName} ${describeRun(config)}: ${describePlan(plan)}; output ${shownOutput}`, {
    version: VERSION,
    command: commandName,
    planned: Object.fromEntries(plan.map(({ metric, days }) => [metric, days.length])),
    output: shownOutput,
  });
  for (const cut of cuts) progress.logger.warn(cut.message, cut.fields);
  const recordRun = async (exitCode: number, rows: Readonly<Record<string, number>>): Promise<void> => {
    await state?.recordRun({ time: new Date().toISOString(), command: `${commandName} ${describeRun(config)}`, exitCode, rows: { ...rows } });
  };
  if (units.length === 0) {
    await recordRun(0, {});
    progress.finish('nothing to import: no day is pending, and every day through yesterday is complete, accepted or given up', { units: 0 }, true);
    return;
  }
  if (!config.credentials) throw new Error('credentials are resolved for every run but --dry-run');
  // A read-only, unwritable or full folder fails now, in a second, rather than after the downloads.
  const folders = [...(config.output.kind === 'files' ? [config.output.dir] : []), ...(statePath === undefined ? [] : [dirname(statePath)])];
  for (const folder of new Set(folders)) await checkWritableFolder(folder);
  const tempFolders = [...(config.output.kind === 'files' ? outputFolders(config.output.dir, units, config.layout) : []), ...folders];
  for (const stale of await removeStaleTempFiles([...new Set(tempFolders)])) {
    const why = stale.reason === 'gone' ? 'which is gone' : 'more than an hour old';
    progress.logger.info(`removed ${stale.path}, a temp file left by process ${stale.pid}, ${why}`);
  }

  const encoding = { format: config.format, shape: config.shape };
  // The run manifest and the lineage events: what the run leaves for loaders and catalogs.
  const records = await RunRecords.open({ commandName, command: `${commandName} ${describeRun(config)}`, config, units, stores, env: context.env, logger: progress.logger, redact: context.redact ?? ((text) => text) });
  let summary: ImportSummary;
  try {
    summary = await runImport(units, { ...config, credentials: config.credentials }, {
      sink: await sinkFor(config, stores, context),
      encoding,
      progress,
      ...(state ? { state } : {}),
      now,
      signal: context.signal,
      env: context.env,
      // Known at once, so a closed stdout (`| head`) that ends the process early still exits with it.
      onFailure: (_unit, error) => {
        context.exitCode ??= exitCodeFor(error);
      },
      onUnit: (outcome) => records.unit(outcome),
    });
  } catch (error) {
    // An interrupted run is a run too: status shows how it ended. Best effort: the state may be what failed.
    await recordRun(exitCodeFor(error), {}).catch(() => {});
    await records.finish({ exitCode: exitCodeFor(error), failure: error, notAttempted: `not attempted: ${messageOf(error)}` });
    throw error;
  }

  const first = summary.failures[0];
  const notTried =
    summary.stoppedBy === 'credentials'
      ? `; ${summary.notTried} not attempted: the credentials were rejected`
      : summary.notTried
        ? `; ${summary.notTried} not tried, the output could not be written`
        : '';
  const line =
    `imported ${summary.succeeded} of ${summary.units} units, ${summary.rows} rows` +
    `${summary.unchanged ? `, ${summary.unchanged} unchanged` : ''}` +
    `${summary.rejected ? `, ${summary.rejected} rejected records` : ''}${summary.warnings ? `, ${summary.warnings} warnings` : ''}` +
    ` in ${summary.seconds.toFixed(1)} s` +
    (first ? `; ${summary.failures.length} failed, first: ${unitLabel(first.unit)}` : '') +
    notTried;
  const { failures: _failures, rowsByMetric, ...fields } = summary;
  // The run's exit code is that of the first failed unit in (metric, day, store) order; a manifest not written is exit 7.
  const exitCode = await records.finish({ exitCode: first ? exitCodeFor(first.error) : 0, failure: first?.error, notAttempted: notAttemptedReason(summary) });
  try {
    await recordRun(exitCode, rowsByMetric);
  } catch (error) {
    // A run that already failed (a full disk) is reported by its unit; otherwise the state's failure is the news.
    if (!first) throw error;
  }
  progress.finish(line, { ...fields, rows_by_metric: rowsByMetric, failed: summary.failures.length, seconds: Number(summary.seconds.toFixed(1)) }, exitCode === 0);
  if (exitCode !== 0) context.exitCode = exitCode;
}

/** Why units were left, for the manifest. */
function notAttemptedReason(summary: ImportSummary): string {
  if (summary.stoppedBy === 'credentials') return 'not attempted: the credentials were rejected';
  if (summary.stoppedBy === 'output') return 'not tried: the output could not be written';
  return 'not attempted: the run ended before it';
}

async function sinkFor(config: ImportConfig, stores: ObjectStores, context: CommandContext): Promise<UnitSink> {
  const encoding = { format: config.format, shape: config.shape };
  switch (config.output.kind) {
    case 'stdout':
      return new StreamSink(context.stdout);
    case 'files':
      return withoutEmptyUnits(new FileSink(config.output.dir, encoding, config.layout));
    case 'objects':
      return withoutEmptyUnits(new ObjectSink(await stores.get(config.output.location.bucket), config.output.location, encoding, config.layout));
  }
}

/** A cut `--max-days` made, as the warning that says so. */
interface Cut {
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * The days of each metric: `--catch-up` per metric from its own coverage (each `--max-days` cut a warning naming the
 * days left), otherwise the window the flags name, the same for every metric.
 */
function planDays(
  metricNames: readonly MetricName[],
  config: ImportConfig,
  state: ImportState | undefined,
  now: Date,
): { plan: MetricDays[]; cuts: Cut[] } {
  const { window } = config;
  if (window.kind !== 'catch-up') {
    const days = resolveDays(window, now, config.dayMode);
    return { plan: metricNames.map((metric) => ({ metric, days })), cuts: [] };
  }
  const cuts: Cut[] = [];
  const plan = catchUpFrom(state, metricNames, config.storeCodes, window, now, config.dayMode).map((metric) => {
    if (metric.freshLeft) {
      const { fresh, freshLeft } = metric;
      cuts.push({
        message:
          `${metric.metric}: --max-days ${window.maxDays} cut the new days: importing ${describeDays(fresh)} now, ` +
          `${freshLeft.count} more day${freshLeft.count === 1 ? ' is' : 's are'} left (${describeRange([freshLeft.from, freshLeft.to])}) for the next --catch-up`,
        fields: { metric: metric.metric, max_days: window.maxDays, days_left: freshLeft.count },
      });
    }
    if (metric.pendingLeft) {
      cuts.push({
        message:
          `${metric.metric}: --max-days ${window.maxDays} cut the pending days: retrying the oldest ${metric.pending.length} ` +
          `(${describeDays(metric.pending)}), ${metric.pendingLeft} more wait for the next --catch-up`,
        fields: { metric: metric.metric, max_days: window.maxDays, pending_left: metric.pendingLeft },
      });
    }
    return { metric: metric.metric, days: metric.days };
  });
  return { plan, cuts };
}

/** The window as the command line gave it, for the run's first line and the state's last run. */
function describeWindow(config: ImportConfig): string {
  const { window } = config;
  switch (window.kind) {
    case 'catch-up':
      return `--catch-up --max-days ${window.maxDays}${window.lookback ? ` --lookback ${window.lookback}` : ''}`;
    case 'date':
      return `--date ${window.date}`;
    case 'range':
      return `--from ${window.from} --to ${window.to ?? window.from}`;
    case 'default':
      return '(yesterday)';
  }
}

/** The window and, in local mode, the day mode, as the command line gave them. */
function describeRun(config: ImportConfig): string {
  if (config.dayMode === 'utc') return describeWindow(config);
  return `--days local ${config.window.kind === 'default' ? '(the latest local day over everywhere)' : describeWindow(config)}`;
}

/** `traffic 2026-11-10..2026-11-12 (3 days), unique-users none`. */
function describePlan(plan: readonly MetricDays[]): string {
  return plan.map(({ metric, days }) => `${metric} ${days.length === 0 ? 'none' : `${describeDays(days)} (${days.length} day${days.length === 1 ? '' : 's'})`}`).join(', ');
}

function describeDays(days: readonly UtcDay[]): string {
  return rangesOfDays(days).map(describeRange).join(', ');
}

/** Where a killed run's temp files can be under an output folder: the folder itself (the state), the data's, the manifests'. */
function outputFolders(dir: string, units: readonly Unit[], layout: Layout): string[] {
  return [dir, ...tempFileFolders(METRIC_NAMES, units, layout).map((folder) => join(dir, folder)), join(dir, RUNS_FOLDER)];
}
