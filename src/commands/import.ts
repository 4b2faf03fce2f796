import type { Destination } from '../destination/destination.js';
import { awsCredentialsIn, ObjectStores } from '../destination/object-stores.js';
import { openDestination } from '../destination/open.js';
import { statePlace } from '../destination/state-place.js';
import { ReportedError, exitCodeFor, messageOf } from '../errors.js';
import { planUnits } from '../import/plan.js';
import { ImportReport } from '../import/report.js';
import { runFailure, runImport, type ImportSummary } from '../import/run.js';
import type { UnitOutcome } from '../metrics/pipeline.js';
import { useColor } from '../log/logger.js';
import { createImportProgress, type ImportProgress } from '../log/progress.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { unitFirstPageUrl } from '../metrics/unit.js';
import { Pacer, type PacerStats } from '../fetch/pacer.js';
import { createRedactor, type Credential } from '../redact.js';
import { planDays } from '../state/catch-up.js';
import { DayCompletion, type DayNote } from '../state/day-completion.js';
import { ImportState } from '../state/import-state.js';
import { nowOf } from './clock.js';
import { SECRET_FLAG_WARNING } from './credentials.js';
import type { CommandAction, CommandBase } from './declaration.js';
import { resolveImportConfig, type ImportConfig } from './import-config.js';
import type { IMPORT_OPTIONS, ImportCommandName } from './import-options.js';
import { describeRun, stateFlags, unitFetcher } from './import-setup.js';
import { RunRecords } from './run-records.js';

/** The composition root of an import: config, logs and reporter, object stores; then `importInto` runs it. */
export function importAction(command: ImportCommandName): CommandAction<typeof IMPORT_OPTIONS> {
  return async ({ context, reporter, options, given }) => {
    const config = await resolveImportConfig({ values: options, given }, context.env, command === 'all' ? METRIC_NAMES.length : 1);
    const credentials = credentialsOf(config, context.env);
    const color = useColor(context.stderr, context.env);
    const progress = await createImportProgress(context.stderr, { format: config.logFormat, level: config.logLevel, credentials, color });
    reporter.use({ logger: progress.logger, redact: createRedactor(credentials) });
    const stores = new ObjectStores({ env: context.env, forcePathStyle: config.s3ForcePathStyle, retries: config.retries, timeoutMs: config.timeoutMs, logger: progress.logger });
    try {
      const destination = openDestination(config.output, { stores, stdout: context.stdout });
      await importInto(command, config, progress, { destination, stores }, { context, reporter });
    } finally {
      // The SDK keeps connections open; the process must be free to end.
      stores.close();
    }
  };
}

/** Every secret the run holds, so that no log line, manifest or lineage event can show one. */
function credentialsOf(config: ImportConfig, env: NodeJS.ProcessEnv): Credential[] {
  return [
    ...(config.credentials ? [{ clientId: config.credentials.clientId, secret: config.credentials.clientSecret }] : []),
    ...awsCredentialsIn(env),
    ...(config.lineage?.apiKey === undefined ? [] : [{ secret: config.lineage.apiKey }]),
  ];
}

/** Why units were left, for the manifest. */
function notAttemptedReason(summary: ImportSummary): string {
  if (summary.stoppedBy === 'credentials') return 'not attempted: the credentials were rejected';
  if (summary.stoppedBy === 'output') return 'not tried: the output could not be written';
  // The cause says it: `the API is unreachable or failing: ... and the next request failed the same way (...)`.
  if (summary.stoppedBy === 'vendor-down') return `not attempted: ${summary.stopCause?.message ?? 'the API is unreachable or failing'}`;
  return 'not attempted: the run ended before it';
}

async function importInto(
  command: ImportCommandName,
  config: ImportConfig,
  progress: ImportProgress,
  { destination, stores }: { readonly destination: Destination; readonly stores: ObjectStores },
  { context, reporter }: CommandBase,
): Promise<void> {
  const now = nowOf(context.env);
  const place = statePlace(config.output, config.statePath);
  // Reading the state object is also the first call to the store: missing credentials, a wrong bucket or region fail
  // here, before any download. A dry run of named days needs no store at all.
  const stateless = place === undefined || (config.dryRun && config.window.kind !== 'catch-up' && place.inBucket);
  // A stream has no files to lay out: its state (--state) keeps whatever layout it has.
  const layout = config.output.streams ? {} : { layout: config.layout };
  const state = stateless ? undefined : await ImportState.load(await place.storage(stores), { now, metricNames: METRIC_NAMES, mode: config.dayMode, ...layout });
  for (const warning of state?.warnings ?? []) progress.logger.warn(warning);
  const metricNames = command === 'all' ? METRIC_NAMES : [command];
  const { plan, cuts } = planDays(metricNames, config, state, now);
  const units = planUnits(plan, config.storeCodes, config.dayMode);
  if (config.dryRun) {
    for (const unit of units) context.stdout.write(`GET ${unitFirstPageUrl(unit, config.baseUrl, config.pageSize).href}\n`);
    return;
  }
  const run = { command, invocation: `${command} ${describeRun(config)}`, output: config.output.name, stateFlags: stateFlags(config) };
  // One pace for every request of the run: a 429 slows every unit, and the report gives its numbers.
  const pacer = new Pacer({
    logger: progress.logger,
    maxWaitMs: config.maxWaitMs,
    ...(context.clock ? { clock: context.clock } : {}),
    ...(config.maxRps === undefined ? {} : { maxRps: config.maxRps }),
  });
  const report = new ImportReport(progress, { ...run, ...(config.secretOnCommandLine ? { optionWarning: SECRET_FLAG_WARNING } : {}) }, (code) => reporter.failed(code), pacer);
  report.started(plan, cuts);
  const recordRun = (exitCode: number, rows: Readonly<Record<string, number>>, requests?: PacerStats): Promise<void> =>
    state?.recordRun({ time: new Date().toISOString(), command: `${command} ${describeRun(config)}`, exitCode, rows: { ...rows }, ...requests }) ?? Promise.resolve();
  if (units.length === 0) {
    await recordRun(0, {});
    return report.nothingToImport();
  }
  if (!config.credentials) throw new Error('credentials are resolved for every run but --dry-run');
  // A read-only, unwritable or full folder fails now, in a second, rather than after the downloads.
  const destinationPlan = { metrics: METRIC_NAMES, units, encoding: { format: config.format, shape: config.shape }, layout: config.layout };
  const stale = [...(await destination.prepare(destinationPlan)), ...(stateless ? [] : await place.prepare())];
  for (const file of stale) report.removedTempFile(file.path, file.pid, file.reason);

  const halt = new AbortController();
  const fetcher = unitFetcher({ ...config, credentials: config.credentials }, progress, context.env, AbortSignal.any([context.signal, halt.signal]), pacer);
  const rules = { storeCodes: config.storeCodes, settleDays: config.settleDays, giveUpDays: config.giveUpDays, onSuspect: config.onSuspect, now, mode: config.dayMode };
  // The run manifest and the lineage events: what the run leaves for loaders and catalogs; each unit reaches both.
  const records = await RunRecords.open({ commandName: command, command: run.invocation, config, units, destination, env: context.env, logger: progress.logger, redact: createRedactor(credentialsOf(config, context.env)) });
  const unitReport = { unit: (outcome: UnitOutcome) => (records.unit(outcome), report.unit(outcome)), days: (notes: readonly DayNote[]) => report.days(notes) };
  const days = new DayCompletion(units, rules, state);
  const parts = { fetch: fetcher.fetch, sink: await destination.sink(destinationPlan), days, report: unitReport, concurrency: config.concurrency, signal: context.signal, halt };
  const summary = await runImport(units, parts).catch(async (error: unknown) => {
    // An interrupted run is a run too, with the rows it wrote: status shows how it ended. Best effort: the state may be what failed.
    report.daysNotOver();
    await recordRun(exitCodeFor(error), days.rowsByMetric, pacer.stats()).catch(() => {});
    await records.finish({ exitCode: exitCodeFor(error), failure: error, notAttempted: `not attempted: ${messageOf(error)}`, ...pacer.stats() });
    throw error;
  }).finally(fetcher.close);
  // The run's exit code is that of the first failed unit in (metric, day, store) order; a manifest not written is exit 7.
  const first = runFailure(summary);
  const exitCode = await records.finish({ exitCode: first === undefined ? 0 : exitCodeFor(first), failure: first, notAttempted: notAttemptedReason(summary), ...pacer.stats() });
  // A run that already failed (a full disk) is reported by its unit; otherwise the state's failure is the news.
  await recordRun(exitCode, summary.rowsByMetric, pacer.stats()).catch((error: unknown) => {
    if (first === undefined) throw error;
  });
  report.finished(summary);
  if (exitCode !== 0) throw new ReportedError(exitCode);
}
