import type { DatasetName } from '../../lineage/events.js';
import type { ManifestShelf } from '../../output/run-manifest.js';
import { withoutEmptyUnits, type UnitSink } from '../../output/sinks.js';
import type { StaleTempFile } from '../../output/stale-temp.js';
import { UsageError } from '../../errors.js';
import type { DestinationCapabilities } from '../capabilities.js';
import type { Destination, DestinationPlan } from '../destination.js';
import type { DestinationSpec } from '../spec.js';
import type { StatePlace } from '../state-place.js';
import { ensureCoverageView } from './coverage-view.js';
import { PostgresManifests } from './manifests.js';
import { takeRunLock } from './run-lock.js';
import { Session, type SessionOptions } from './session.js';
import { PostgresSink } from './sink.js';
import { PostgresStateStorage } from './state-storage.js';
import { ensureMetricTable, ensureSchema, OWN_TABLES, tableNameOf } from './tables.js';
import { resolveTarget, type PostgresUrl } from './url.js';

/** Why options that describe files are refused: the tables have the Parquet file's typed columns, loaded from CSV rows. */
const NO_FILES = '-f, --layout and --shape results describe files; a PostgreSQL output has typed tables, so drop them';
const NO_STATE_FLAG = 'a PostgreSQL output keeps its state in the database, beside the data; drop --state';

/**
 * What a database holds: typed tables, loaded from each unit's CSV rows (COPY reads CSV), so no choice of format,
 * layout or shape; its state in a table beside the data (never `--state`), which keeps the run's settings as a
 * folder's does; units loaded as soon as they are fetched, one run at a time.
 */
export const POSTGRES_CAPABILITIES: DestinationCapabilities = {
  files: false,
  formats: ['csv'],
  defaultFormat: 'csv',
  shapes: ['rows'],
  state: 'inside',
  keeps: ['mode', 'layout', 'format'],
  sharedHeader: false,
  commitsAhead: true,
  oneRunAtATime: true,
  refusals: {
    format: NO_FILES,
    layout: NO_FILES,
    shape: NO_FILES,
    state: NO_STATE_FLAG,
  },
};

/**
 * `-o postgresql://...`: a table per metric in the URL's schema, each unit replaced in one transaction with its
 * coverage; the state, the run manifests and the run's lock in the same schema. The run holds one connection (its
 * lock, its state, its manifests) and loads units on it and on a second one.
 */
export class PostgresDestination implements Destination {
  readonly capabilities = POSTGRES_CAPABILITIES;
  private readonly session: Session;
  /** A second connection units are loaded on beside the first, so the server loads two at once. */
  private readonly loading: Session;

  constructor(
    readonly spec: DestinationSpec,
    url: PostgresUrl,
    private readonly options: SessionOptions,
  ) {
    const target = resolveTarget(url, options.env, options.command);
    this.session = new Session(url, target, options);
    this.loading = new Session(url, target, options);
  }

  private get target(): Session['target'] {
    return this.session.target;
  }

  /** The run's lock (a second run waits here), then the schema, the tool's tables and the coverage view made where missing. */
  claim(signal?: AbortSignal): Promise<void> {
    const where = `${this.target.shown} (schema ${this.target.schema})`;
    return this.session.use('cannot prepare', async (client) => {
      // The lock first (it names the schema, which need not exist yet): two first runs never make the tables at once.
      await takeRunLock(client, this.target.schema, this.options.logger, where, signal);
      await ensureSchema(client, this.target.schema);
      const cannot = await ensureCoverageView(client, this.target.schema);
      if (cannot !== undefined) this.options.logger.warn(cannot);
    });
  }

  /** Each metric's table made where missing; one whose columns differ stops the run before any download (exit 2). */
  async prepare(plan: DestinationPlan): Promise<readonly StaleTempFile[]> {
    const opened = await Promise.allSettled([
      this.session.use('cannot prepare the tables in', async (client) => {
        for (const [metric, columns] of plan.columns) await ensureMetricTable(client, this.target.schema, tableNameOf(metric), columns);
      }),
      // The loading connection opened now, beside the first, not when the first unit goes to it: once units load, a
      // path that freezes meets open connections and their answer bound, never an opening and its retries.
      this.loading.use('cannot prepare', () => Promise.resolve()),
    ]);
    // The tables' failure first: a table with other columns is the news, whatever else failed.
    for (const result of opened) if (result.status === 'rejected') throw result.reason;
    return [];
  }

  sink(plan: DestinationPlan): Promise<UnitSink> {
    return Promise.resolve(withoutEmptyUnits(new PostgresSink([this.session, this.loading], plan.columns, plan.dayMode)));
  }

  manifests(): Promise<ManifestShelf> {
    return Promise.resolve(new PostgresManifests(this.session));
  }

  /** Rows have no file: a settled day's manifest names none. */
  storedFile(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  /** A metric's table, as OpenLineage names a PostgreSQL table: namespace `postgres://host:port`, name `db.schema.table`. */
  dataset(folder: string): DatasetName {
    const { host, port, database, schema } = this.target;
    // An IPv6 address in brackets, as in any URL; a unix socket's folder encoded.
    const authority = host.includes(':') ? `[${host}]` : encodeURIComponent(host);
    return { namespace: `postgres://${authority}:${port}`, name: `${database}.${schema}.${tableNameOf(folder)}` };
  }

  statePlace(state: string | undefined): StatePlace {
    if (state !== undefined) throw new UsageError(NO_STATE_FLAG);
    return {
      url: new PostgresStateStorage(this.session).location,
      remote: true,
      storage: () => Promise.resolve(new PostgresStateStorage(this.session)),
      prepare: () => Promise.resolve([]),
    };
  }

  /** Every unit's set-aside records are rows of one table. */
  rejectedPlace(): string {
    return `${this.target.schema}.${OWN_TABLES.rejected}`;
  }

  async close(): Promise<void> {
    await Promise.all([this.session.close(), this.loading.close()]);
  }
}
