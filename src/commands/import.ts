import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { Logger } from '../log/logger.js';
import { exitCodeFor } from '../errors.js';
import { createLogger, useColor } from '../log/logger.js';
import { createImportProgress } from '../log/progress.js';
import { METRIC_NAMES, type MetricName } from '../metrics/descriptors.js';
import { catchUpFrom, planUnits, runImport, withoutEmptyUnits, type MetricDays } from '../metrics/run-import.js';
import { unitFirstPageUrl, unitLabel } from '../metrics/unit.js';
import { checkWritableFolder } from '../output/atomic-file.js';
import { FileSink, StreamSink } from '../output/sinks.js';
import { ImportState, STATE_FILE_NAME } from '../output/state.js';
import { createRedactor } from '../redact.js';
import { removeStaleTempFiles } from '../output/stale-temp.js';
import { resolveDays } from '../window/days.js';
import type { CommandContext } from './context.js';
import { IMPORT_OPTIONS, resolveImportConfig, type ImportConfig } from './import-options.js';
import { addOptions, type CollectedOptions } from './options.js';

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
  # nightly: each metric from its own last complete day, plus 2 days again for late corrections
  $ area-metrics ${name} --catch-up --lookback 2
  # stream to another tool
  $ area-metrics ${name} --date 2026-11-20 -o - | jq -c .
`;
}

export function registerImportCommands(program: Command, context: CommandContext): void {
  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.summary).addHelpText('after', examples(spec.name));
    addOptions(command, IMPORT_OPTIONS).action(async (raw: CollectedOptions) => {
      await runImportCommand(spec.metrics, raw, context);
    });
  }
}

async function runImportCommand(metricNames: readonly MetricName[], raw: CollectedOptions, context: CommandContext): Promise<void> {
  if (raw.logFormat === 'json') {
    // A bad flag found while resolving the config is reported as JSON too (with --log-format json every stderr line is JSON).
    const early = createLogger({ stream: context.stderr, format: 'json', level: 'error' });
    context.reportError = (message) => early.error(message);
  }
  const config = await resolveImportConfig(raw, context.env, metricNames.length);
  const credentials = config.credentials ? [{ clientId: config.credentials.clientId, secret: config.credentials.clientSecret }] : [];
  const progress = await createImportProgress(context.stderr, {
    format: config.logFormat,
    level: config.logLevel,
    credentials,
    color: useColor(context.stderr, context.env),
  });
  context.redact = createRedactor(credentials);
  context.reportError = (message) => progress.logger.error(message);

  const now = new Date();
  const statePath =
    config.statePath ?? (config.output.kind === 'files' ? join(config.output.dir, STATE_FILE_NAME) : undefined);
  const state = statePath === undefined ? undefined : await ImportState.load(statePath, { now, metricNames: METRIC_NAMES });
  const plan = planDays(metricNames, config, state, now, progress.logger);
  const units = planUnits(plan, config.storeCodes);

  if (config.dryRun) {
    for (const unit of units) context.stdout.write(`GET ${unitFirstPageUrl(unit, config.baseUrl, config.pageSize).href}\n`);
    return;
  }
  if (units.length === 0) {
    progress.finish('nothing to import: every day through yesterday is already complete', { units: 0 }, true);
    return;
  }
  if (!config.credentials) throw new Error('credentials are resolved for every run but --dry-run');
  // A read-only, unwritable or full folder fails now, in a second, rather than after the downloads.
  const folders = [...(config.output.kind === 'files' ? [config.output.dir] : []), ...(statePath === undefined ? [] : [dirname(statePath)])];
  for (const folder of new Set(folders)) await checkWritableFolder(folder);
  const tempFolders = [...(config.output.kind === 'files' ? outputFolders(config.output.dir) : []), ...folders];
  for (const stale of await removeStaleTempFiles([...new Set(tempFolders)])) {
    const why = stale.reason === 'gone' ? 'which is gone' : 'more than an hour old';
    progress.logger.info(`removed ${stale.path}, a temp file left by process ${stale.pid}, ${why}`);
  }

  const encoding = { format: config.format, shape: config.shape };
  const summary = await runImport(units, { ...config, credentials: config.credentials }, {
    sink: config.output.kind === 'stdout' ? new StreamSink(context.stdout) : withoutEmptyUnits(new FileSink(config.output.dir, encoding)),
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
  });

  const first = summary.failures[0];
  const line =
    `imported ${summary.succeeded} of ${summary.units} units, ${summary.rows} rows` +
    `${summary.rejected ? `, ${summary.rejected} rejected records` : ''}${summary.warnings ? `, ${summary.warnings} warnings` : ''}` +
    ` in ${summary.seconds.toFixed(1)} s` +
    (first ? `; ${summary.failures.length} failed, first: ${unitLabel(first.unit)}` : '') +
    (summary.notTried ? `; ${summary.notTried} not tried, the output could not be written` : '');
  const { failures: _failures, ...fields } = summary;
  progress.finish(line, { ...fields, failed: summary.failures.length, seconds: Number(summary.seconds.toFixed(1)) }, !first);
  // The run's exit code is that of the first failed unit in (metric, day, store) order.
  if (first) context.exitCode = exitCodeFor(first.error);
}

/**
 * The days of each metric: `--catch-up` per metric from its own state (a `--max-days` cut is a warning naming the days
 * left), otherwise the window the flags name, the same for every metric.
 */
function planDays(
  metricNames: readonly MetricName[],
  config: ImportConfig,
  state: ImportState | undefined,
  now: Date,
  logger: Logger,
): MetricDays[] {
  const { window } = config;
  if (window.kind !== 'catch-up') {
    const days = resolveDays(window, now);
    return metricNames.map((metric) => ({ metric, days }));
  }
  return catchUpFrom(state, metricNames, config.storeCodes, window, now).map((plan) => {
    if (plan.left) {
      const taken = plan.days.slice(plan.lookbackDays);
      logger.warn(
        `${plan.metric}: --max-days ${window.maxDays} cut the catch-up: importing ${taken[0]}..${taken.at(-1)} now, ` +
          `${plan.left.count} more days still missing (${plan.left.from}..${plan.left.to}); the next --catch-up continues`,
        { metric: plan.metric, max_days: window.maxDays, days_left: plan.left.count },
      );
    }
    return { metric: plan.metric, days: plan.days };
  });
}

/** Where this tool writes under an output folder: the folder itself (the state), each metric's, each `_rejected` one. */
function outputFolders(dir: string): string[] {
  return [dir, ...METRIC_NAMES.flatMap((metric) => [join(dir, metric), join(dir, '_rejected', metric)])];
}
