import { exitCodeFor, InterruptedError, messageOf } from '../errors.js';
import { LineageClient } from '../lineage/client.js';
import type { Destination } from '../destination/destination.js';
import { apiDataset } from '../lineage/datasets.js';
import { lineageParentFrom, type LineageParent } from '../lineage/parent.js';
import { extensionOf } from '../output/format.js';
import { addDays } from '../window/days.js';
import { runEvent, type DatasetField, type OutputDataset, type OutputStatistics, type RunEventType } from '../lineage/events.js';
import type { Logger } from '../log/logger.js';
import { typedColumns, type MetricDescriptor } from '../metrics/descriptors.js';
import type { UnitOutcome } from './pipeline.js';
import type { Unit } from '../metrics/unit.js';
import { metricFolder } from '../output/layout.js';
import { newRunId, RunManifestBuilder, saveManifest, type ManifestShelf } from '../output/run-manifest.js';
import type { Redactor } from '../redact.js';
import { VERSION } from '../version.js';
import type { SettledOutput, SettledWindow } from './config.js';
import type { WallClock } from '../window/wall-clock.js';
import type { DayFinality } from './finality.js';
import type { RunTally } from './tally.js';

/** What the records of a run are made from. */
export interface RunRecordsInput {
  /** The command's name: the lineage job. */
  readonly commandName: string;
  /** The command with its window, as the manifest tells it (`traffic --catch-up --max-days 31`). */
  readonly command: string;
  /** What the run writes, where, and where its lineage goes. */
  readonly output: SettledOutput;
  /** The run's days: the manifest's day mode, the lineage job's kind. */
  readonly window: SettledWindow;
  /** The API the run reads: the lineage input. */
  readonly baseUrl: URL;
  /** The run's clock: the manifest's start and end, each event's time. */
  readonly clock: WallClock;
  readonly units: readonly Unit[];
  /** Where the run writes: the manifest's shelf and the lineage datasets are its. */
  readonly destination: Destination;
  /** The run's one count: the lineage outputs' statistics. */
  readonly tally: RunTally;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** Applied to every error message the records carry. */
  readonly redact: Redactor;
  /** What the manifest says of each unit's day, from the state. */
  readonly finality?: DayFinality;
  /** The longest the run waits on the lineage server, in all; tests make it short. */
  readonly lineageBudgetMs?: number;
}

/** How the run ended, as far as its records care. */
export interface RunEnd {
  readonly exitCode: number;
  /** The first failure (in plan order), or what stopped the run. */
  readonly failure?: unknown;
  /** Said of the units the run never got to. */
  readonly notAttempted?: string;
  /** Requests sent to the vendor and its 429 answers, where the run counted them. */
  readonly requests?: number;
  readonly throttled?: number;
}

/**
 * What a run leaves for the systems around it, beside its data: the run manifest under `<output>/_runs/` (for
 * loaders) and the OpenLineage events (for catalogs). Both share the run id; the manifest is written when the run
 * ends, the lineage START is posted when it starts, and COMPLETE, FAIL or ABORT when it ends.
 */
export class RunRecords {
  private constructor(
    private readonly input: RunRecordsInput,
    private readonly runId: string,
    private readonly manifest: { readonly builder: RunManifestBuilder; readonly shelf: ManifestShelf } | undefined,
    private readonly lineage: LineageClient | undefined,
    private readonly parent: LineageParent,
  ) {}

  /** Per metric, the days the run wrote a file of: with the hive layout, the partitions lineage names. */
  private readonly written = new Map<string, Set<string>>();

  /** Opens the run's records and posts its START event (without waiting for the lineage server). */
  static async open(input: RunRecordsInput): Promise<RunRecords> {
    const { output, window } = input;
    const start = input.clock();
    const shelf = await input.destination.manifests();
    const lineage =
      output.lineage &&
      new LineageClient({
        settings: output.lineage,
        env: input.env,
        logger: input.logger,
        ...(input.lineageBudgetMs === undefined ? {} : { budgetMs: input.lineageBudgetMs }),
      });
    const runId = newRunId(start.getTime());
    const builder = new RunManifestBuilder(
      {
        runId,
        version: VERSION,
        command: input.command,
        start,
        ...(input.destination.capabilities.files ? { layout: output.layout, format: output.format } : {}),
        days: window.dayMode,
      },
      input.units,
    );
    // A malformed parent is said once and left out: lineage never fails a run.
    const parent = lineage === undefined ? {} : lineageParentFrom(input.env);
    if (parent.warning !== undefined) input.logger.warn(parent.warning);
    const records = new RunRecords(input, runId, shelf && { builder, shelf }, lineage, parent);
    lineage?.begin(records.event('START'));
    return records;
  }

  /** Keeps a committed unit's outcome. */
  unit(outcome: UnitOutcome): void {
    const { unit } = outcome;
    if (!outcome.ok) {
      this.manifest?.builder.record(unit, {
        ok: false,
        exitCode: exitCodeFor(outcome.error),
        message: this.input.redact(messageOf(outcome.error)),
      });
      return;
    }
    const { data, file } = outcome;
    if (file !== undefined) {
      const days = this.written.get(unit.metric.name) ?? new Set<string>();
      this.written.set(unit.metric.name, days.add(unit.day));
    }
    const rejected =
      data.rejected.length === 0
        ? undefined
        : { records: data.rejected.length, path: this.input.destination.rejectedPlace(unit, this.input.output.layout) };
    this.manifest?.builder.record(unit, {
      ok: true,
      rows: data.rowCount,
      changed: outcome.changed,
      ...(file === undefined ? {} : { file }),
      ...(rejected ? { rejected } : {}),
    });
  }

  /**
   * Writes the manifest and posts the last lineage event; returns the run's exit code, which is 7 when the manifest
   * could not be written and nothing else had failed. Never throws: a run that is already failing is reported by
   * its own error.
   */
  async finish(end: RunEnd): Promise<number> {
    let { exitCode, failure } = end;
    if (this.manifest) {
      const { builder, shelf } = this.manifest;
      const { finality } = this.input;
      const manifest = builder.build({
        end: this.input.clock(),
        exitCode,
        requests: end.requests,
        throttled: end.throttled,
        notAttempted: end.notAttempted ?? 'not attempted: the run ended before it',
        ...(finality === undefined ? {} : { standing: (unit) => finality.standing(unit.metric.name, unit.day) }),
      });
      try {
        const saved = await saveManifest(shelf, manifest);
        this.input.logger.debug(`run manifest ${saved.location}`, { manifest: saved.location });
        if (saved.pruneError !== undefined) {
          this.input.logger.warn(
            `cannot remove the run manifests older than the newest ones: ${this.input.redact(messageOf(saved.pruneError))}`,
          );
        }
      } catch (error) {
        // A run that already failed is reported by its own failure; otherwise the manifest's is the news.
        if (exitCode === 0) {
          this.input.logger.error(this.input.redact(messageOf(error)));
          exitCode = exitCodeFor(error);
          failure = error;
        }
      }
    }
    if (this.lineage) {
      const type: RunEventType = exitCode === 0 ? 'COMPLETE' : failure instanceof InterruptedError ? 'ABORT' : 'FAIL';
      const message = type === 'FAIL' ? this.input.redact(failure === undefined ? `exit code ${exitCode}` : messageOf(failure)) : undefined;
      await this.lineage.end(this.event(type, message));
    }
    return exitCode;
  }

  private event(type: RunEventType, errorMessage?: string): Record<string, unknown> {
    const { output, window } = this.input;
    // The run's metrics as its units carry them, in plan order.
    const metrics = [...new Set(this.input.units.map((unit) => unit.metric))];
    return runEvent({
      type,
      time: this.input.clock(),
      run: {
        runId: this.runId,
        namespace: output.lineage?.namespace ?? '',
        job: jobName(this.input.commandName, window.days.kind),
        ...nominalTime(this.input.units),
        ...(this.parent.parent === undefined ? {} : { parent: this.parent.parent }),
        ...(this.parent.root === undefined ? {} : { root: this.parent.root }),
      },
      inputs: metrics.map((metric) => apiDataset(this.input.baseUrl, metric.resource)),
      outputs: metrics.flatMap((metric) => this.output(metric, type !== 'START')),
      ...(errorMessage === undefined ? {} : { errorMessage }),
    });
  }

  /**
   * A metric's folder or prefix as an output dataset, with its columns and storage and, once the run is over, what it
   * wrote (with the hive layout, which partitions).
   */
  private output(metric: MetricDescriptor, ended: boolean): OutputDataset[] {
    const { output: config } = this.input;
    const name = this.input.destination.dataset(metricFolder(metric.name, config.layout));
    if (name === undefined) return [];
    // `--shape results` keeps the API's nested objects: no fixed columns to tell.
    const fields: DatasetField[] | undefined =
      config.shape === 'results'
        ? undefined
        : [...(config.format === 'ndjson' ? [{ name: 'metric', type: 'string' as const }] : []), ...typedColumns(metric)];
    // A table is no file: its storage is the database the namespace names.
    const layer = STORAGE_LAYERS.find((prefix) => name.namespace.startsWith(prefix));
    const storage = layer === undefined ? undefined : { layer: layer.replace(/:.*/, ''), fileFormat: extensionOf(config) };
    const statistics: OutputStatistics | undefined = ended ? this.input.tally.of(metric.name) : undefined;
    const days = ended && config.layout === 'hive' ? [...(this.written.get(metric.name) ?? [])].sort() : [];
    return [
      {
        ...name,
        ...(fields === undefined ? {} : { fields }),
        ...(storage === undefined ? {} : { storage }),
        ...(statistics === undefined ? {} : { statistics }),
        ...(config.layout === 'hive' ? { partitionColumns: ['metric', 'dt'] } : {}),
        ...(days.length === 0 ? {} : { partitions: days.map((dt) => ({ metric: metric.name, dt })) }),
      },
    ];
  }
}

/** The dataset namespaces whose data are files, as the storage facet names their layer (`file`, `s3`). */
const STORAGE_LAYERS = ['file', 's3:'];

/**
 * The lineage job: the command and the kind of run, so a catalog keeps the nightly catch-up, a backfill of named
 * days and a run of the default day apart (`all.catch-up`, `all.backfill`, `all.daily`).
 */
export function jobName(command: string, window: SettledWindow['days']['kind']): string {
  return `${command}.${window === 'catch-up' ? 'catch-up' : window === 'default' ? 'daily' : 'backfill'}`;
}

/** The days a run covers as a time: the start of the first (UTC) to the end of the last. */
function nominalTime(units: readonly Unit[]): { nominal?: { start: string; end: string } } {
  const days = units.map((unit) => unit.day).sort();
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) return {};
  return { nominal: { start: `${first}T00:00:00Z`, end: `${addDays(last, 1)}T00:00:00Z` } };
}
