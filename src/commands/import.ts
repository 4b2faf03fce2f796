import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { exitCodeFor } from '../errors.js';
import { createLogger, useColor } from '../log/logger.js';
import { createImportProgress } from '../log/progress.js';
import { METRIC_NAMES, type MetricName } from '../metrics/descriptors.js';
import { catchUpFrom, planUnits, runImport } from '../metrics/run-import.js';
import { unitFirstPageUrl, unitLabel } from '../metrics/unit.js';
import { checkWritableFolder } from '../output/atomic-file.js';
import { FileSink, StreamSink } from '../output/sinks.js';
import { ImportState, STATE_FILE_NAME } from '../output/state.js';
import { createRedactor } from '../redact.js';
import { resolveDays } from '../window/days.js';
import type { CommandContext } from './context.js';
import { addImportOptions, resolveImportConfig, type RawImportOptions } from './import-options.js';

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
      await runImportCommand(spec.metrics, raw, context);
    });
  }
}

async function runImportCommand(metricNames: readonly MetricName[], raw: RawImportOptions, context: CommandContext): Promise<void> {
  if (raw.logFormat === 'json') {
    // A bad flag found while resolving the config is reported as JSON too (SPEC 2.7: every stderr line).
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

  const statePath =
    config.statePath ?? (config.output.kind === 'files' ? join(config.output.dir, STATE_FILE_NAME) : undefined);
  const state = statePath === undefined ? undefined : await ImportState.load(statePath);
  const window =
    config.window.kind === 'catch-up-pending'
      ? { kind: 'catch-up' as const, lastCompleteDay: catchUpFrom(state, metricNames, config.storeCodes), maxDays: config.window.maxDays }
      : config.window;
  const units = planUnits(metricNames, resolveDays(window, new Date()), config.storeCodes);

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

  const encoding = { format: config.format, shape: config.shape };
  const summary = await runImport(units, { ...config, credentials: config.credentials }, {
    sink: config.output.kind === 'stdout' ? new StreamSink(context.stdout) : new FileSink(config.output.dir, encoding),
    encoding,
    progress,
    ...(state ? { state } : {}),
    signal: context.signal,
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
  // The run's exit code is that of the first failed unit in (metric, day, store) order (SPEC 2.6).
  if (first) context.exitCode = exitCodeFor(first.error);
}
