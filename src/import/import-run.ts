import type { Writable } from 'node:stream';
import type { Destination } from '../destination/destination.js';
import type { ObjectStores } from '../destination/object-stores.js';
import { exitCodeFor, messageOf, ReportedError } from '../errors.js';
import type { Clock } from '../fetch/clock.js';
import { Pacer } from '../fetch/pacer.js';
import type { ImportProgress } from '../log/progress.js';
import { DESCRIPTORS, typedColumns, type MetricDescriptor } from '../metrics/descriptors.js';
import { unitFirstPageUrl, type Unit } from '../metrics/unit.js';
import type { Redactor } from '../redact.js';
import { DayCompletion } from './day-completion.js';
import { ImportState } from '../state/import-state.js';
import type { ImportConfig, SettledRunConfig } from './config.js';
import { unitFetcher } from './fetcher.js';
import { DayFinality } from './finality.js';
import type { RunDescription } from './invocation.js';
import { planDays, planUnits } from './plan.js';
import { RunRecords } from './records.js';
import { ImportReport } from './report.js';
import { runFailure, runImport } from './run.js';
import { leftUnits } from './stop.js';
import { RunTally } from './tally.js';
import type { WallClock } from '../window/wall-clock.js';

/** What an import gets from the command that starts it. */
export interface ImportWorld {
  readonly stdout: Writable;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted with an InterruptedError on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** What retries and the pace wait on (a virtual one in tests); absent, the system's. */
  readonly clock?: Clock;
  /** The run's one wall clock: read once at the start for which days are over, and for every stamp of its records. */
  readonly now: WallClock;
  readonly progress: ImportProgress;
  /** Masks every secret the run holds, in the manifest and lineage too. */
  readonly redact: Redactor;
  /** Told of each failed unit's exit code as soon as it is reported. */
  readonly failed: (exitCode: number) => void;
  readonly destination: Destination;
  readonly stores: ObjectStores;
}

/**
 * One import, from its config to its last record: the state from its place, the days and units planned, then the
 * units fetched, written, judged and reported in plan order, and the run's records (the state's last run, the
 * manifest, lineage) made from its one tally. Failed units set the exit code (a `ReportedError`); nothing is thrown
 * for them. `metrics` are the descriptors imported: a metric is one descriptor, the tool's own or a caller's.
 */
export async function importMetrics(
  metrics: readonly MetricDescriptor[],
  config: ImportConfig,
  run: RunDescription,
  world: ImportWorld,
): Promise<void> {
  const { progress, destination } = world;
  const now = world.now();
  const { output, window } = config;
  // The metrics a state or an output folder may hold: the tool's and these.
  const known = [...new Set([...DESCRIPTORS, ...metrics].map((metric) => metric.name))];
  const place = destination.statePlace(output.stateLocation);
  // Reading the state object is also the first call to the store: missing credentials, a wrong bucket or region fail
  // here, before any download. A dry run of named days needs no store at all.
  const stateless = place === undefined || (config.dryRun && window.days.kind !== 'catch-up' && place.remote);
  const held = destination.capabilities;
  // The settings its state keeps, as the run states them (a stream's --state keeps no layout or format: it has no files).
  const keeps = new Set(held.keeps);
  const kept = {
    ...(window.dayMode && keeps.has('mode') ? { mode: window.dayMode } : {}),
    ...(output.layout && keeps.has('layout') ? { layout: output.layout } : {}),
    ...(output.format && keeps.has('format') ? { format: output.format } : {}),
    ...(keeps.has('format') ? { defaultFormat: held.defaultFormat } : {}),
  };
  // One run at a time: the state is read once this run's turn has come, so it plans from the last.
  if (!config.dryRun && held.oneRunAtATime) await destination.claim(world.signal);
  const state = stateless
    ? undefined
    : await ImportState.load(await place.storage(world.stores), { now, metricNames: known, ...kept, fromEnv: output.settingsFromEnv });
  for (const warning of state?.warnings ?? []) progress.logger.warn(warning);
  // Every setting the run did not state is the state's, so a folder needs none of them again.
  const settledWindow = { ...window, dayMode: window.dayMode ?? state?.dayMode ?? 'utc' };
  const settledOutput = {
    ...output,
    layout: output.layout ?? state?.layout ?? 'flat',
    format: output.format ?? state?.format ?? held.defaultFormat,
  };
  const { plan, cuts } = planDays(
    metrics.map((metric) => metric.name),
    settledWindow,
    state,
    now,
  );
  const units = planUnits(plan, settledWindow.storeCodes, settledWindow.dayMode, metrics);
  if (config.dryRun) {
    for (const unit of units) world.stdout.write(`GET ${unitFirstPageUrl(unit, config.api.baseUrl, config.api.pageSize).href}\n`);
    return;
  }
  const settled: SettledRunConfig = { ...config, window: settledWindow, output: settledOutput };
  return runSettled(metrics, settled, run, world, { state, known, now, plan, cuts, units });
}

/** What the run planned before its first request. */
interface Planned {
  readonly state: ImportState | undefined;
  /** The metrics a state or an output folder may hold. */
  readonly known: readonly string[];
  /** The run's now, read once: which days are over. */
  readonly now: Date;
  readonly plan: ReturnType<typeof planDays>['plan'];
  readonly cuts: ReturnType<typeof planDays>['cuts'];
  readonly units: readonly Unit[];
}

/** The import once its settings are settled, its state (if any) open and its units planned. */
async function runSettled(
  metrics: readonly MetricDescriptor[],
  config: SettledRunConfig,
  run: RunDescription,
  world: ImportWorld,
  { state, known, now, plan, cuts, units }: Planned,
): Promise<void> {
  const { progress, destination } = world;
  const { api, window, output } = config;
  const stateless = state === undefined;
  const place = destination.statePlace(output.stateLocation);
  // One pace for every request of the run: a 429 slows every unit, and the report gives its numbers.
  const pacer = new Pacer({
    logger: progress.logger,
    maxWaitMs: api.maxWaitMs,
    ...(world.clock ? { clock: world.clock } : {}),
    ...(api.maxRps === undefined ? {} : { maxRps: api.maxRps }),
    units: units.length,
  });
  const report = new ImportReport(progress, run, world.failed, pacer);
  report.started(plan, cuts);
  const tally = new RunTally();
  const recordRun = (exitCode: number): Promise<void> =>
    state?.recordRun({
      time: world.now().toISOString(),
      command: run.invocation,
      exitCode,
      rows: tally.rowsByMetric(),
      ...pacer.stats(),
    }) ?? Promise.resolve();
  if (units.length === 0) {
    await recordRun(0);
    return report.nothingToImport();
  }
  // A read-only, unwritable or full folder fails now, in a second, rather than after the downloads.
  const destinationPlan = {
    metrics: known,
    units,
    encoding: { format: output.format, shape: output.shape },
    layout: output.layout,
    dayMode: window.dayMode,
    columns: new Map(metrics.map((metric) => [metric.name, typedColumns(metric)])),
  };
  const stale = [...(await destination.prepare(destinationPlan)), ...(place === undefined || stateless ? [] : await place.prepare())];
  for (const file of stale) report.removedTempFile(file.path, file.pid, file.reason);

  const halt = new AbortController();
  const fetcher = unitFetcher(api, output, progress, world.env, AbortSignal.any([world.signal, halt.signal]), pacer);
  const rules = { ...config.judgement, storeCodes: window.storeCodes, now, mode: window.dayMode };
  // The run manifest and the lineage events: what the run leaves for loaders and catalogs; each unit reaches both.
  const records = await RunRecords.open({
    commandName: run.command,
    command: run.invocation,
    output,
    window,
    baseUrl: api.baseUrl,
    clock: world.now,
    units,
    destination,
    tally,
    finality: new DayFinality(state, window.storeCodes, units),
    env: world.env,
    logger: progress.logger,
    redact: world.redact,
  });
  const unitReport = {
    unit: (outcome: Parameters<RunRecords['unit']>[0]) => (records.unit(outcome), report.unit(outcome)),
    days: report.days.bind(report),
  };
  const days = new DayCompletion(units, rules, state);
  const parts = {
    fetch: fetcher.fetch,
    sink: await destination.sink(destinationPlan),
    commitsAhead: destination.capabilities.commitsAhead,
    days,
    report: unitReport,
    concurrency: api.concurrency,
    signal: world.signal,
    halt,
    tally,
  };
  const summary = await runImport(units, parts)
    .catch(async (error: unknown) => {
      // An interrupted run is a run too, with the rows it wrote: status shows how it ended. Best effort: the state may be what failed.
      report.daysNotOver();
      await recordRun(exitCodeFor(error)).catch(() => {});
      await records.finish({
        exitCode: exitCodeFor(error),
        failure: error,
        notAttempted: `not attempted: ${messageOf(error)}`,
        ...pacer.stats(),
      });
      throw error;
    })
    .finally(fetcher.close);
  // The run's exit code is that of the first failed unit in (metric, day, store) order; a manifest not written is exit 7.
  const first = runFailure(summary);
  const exitCode = await records.finish({
    exitCode: first === undefined ? 0 : exitCodeFor(first),
    failure: first,
    notAttempted: leftUnits(summary).manifest,
    ...pacer.stats(),
  });
  // A run that already failed (a full disk) is reported by its unit; otherwise the state's failure is the news.
  await recordRun(exitCode).catch((error: unknown) => {
    if (first === undefined) throw error;
  });
  report.finished(summary);
  if (exitCode !== 0) throw new ReportedError(exitCode);
}
