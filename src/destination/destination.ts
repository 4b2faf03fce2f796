import type { DatasetName } from '../lineage/events.js';
import type { OutputEncoding } from '../output/format.js';
import type { Layout, UnitPlace } from '../output/layout.js';
import type { ParquetColumn } from '../output/parquet.js';
import type { ManifestShelf } from '../output/run-manifest.js';
import type { StoredFile, UnitSink } from '../output/sinks.js';
import type { StaleTempFile } from '../output/stale-temp.js';
import type { DestinationSpec } from './spec.js';
import type { StatePlace } from './state-place.js';

/** What a run's units are and how they are written: the destination shapes everything it keeps by them. */
export interface DestinationPlan {
  readonly metrics: readonly string[];
  readonly units: readonly UnitPlace[];
  readonly encoding: OutputEncoding;
  readonly layout: Layout;
  /** Each imported metric's typed columns: what a destination with tables makes its tables of. */
  readonly columns: ReadonlyMap<string, readonly ParquetColumn[]>;
}

/**
 * Where a run writes, chosen once from `-o` (`openDestination`): it gives the run its sink, its manifest shelf, the
 * lineage datasets, and its own checks before any download. A new kind (a database) is one more implementation;
 * the run does not change.
 */
export interface Destination {
  readonly spec: DestinationSpec;
  /**
   * Before the run reads its state: a destination that admits one run at a time (a database) waits here for the run
   * before it to end (SIGINT or SIGTERM, `signal`, ends the wait), and holds its turn until `close`. Files need none.
   */
  claim?(signal?: AbortSignal): Promise<void>;
  /** Its connections closed (and its turn given up): the process must be free to end. */
  close?(): Promise<void>;
  /** Where set-aside records go when that is not a file beside the unit's (`_rejected/...`): a database's table. */
  rejectedPlace?(): string;
  /**
   * Fails now, in a second, if it cannot be written (a read-only or full folder) rather than after the downloads,
   * and removes what runs killed without a chance to clean up left behind; returns what it removed.
   */
  prepare(plan: DestinationPlan): Promise<readonly StaleTempFile[]>;
  sink(plan: DestinationPlan): Promise<UnitSink>;
  /** Where the run manifests go; none for a stream. */
  manifests(): Promise<ManifestShelf | undefined>;
  /** A unit's file as stored (`path` relative to the destination), its size and SHA-256; undefined if there is none. */
  storedFile(path: string): Promise<StoredFile | undefined>;
  /** A metric's folder (or prefix) as a lineage dataset; none for a stream. */
  dataset(folder: string): DatasetName | undefined;
  /** Where its state is kept: `--state` (`state`) if given, else beside its data; none for a stream without it. */
  statePlace(state: string | undefined): StatePlace | undefined;
}
