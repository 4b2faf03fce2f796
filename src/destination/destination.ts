import type { DatasetName } from '../lineage/events.js';
import type { OutputEncoding } from '../output/format.js';
import { rejectedPath, type Layout, type UnitPlace } from '../output/layout.js';
import type { ParquetColumn } from '../output/parquet.js';
import type { ManifestShelf } from '../output/run-manifest.js';
import type { StoredFile, UnitSink } from '../output/sinks.js';
import type { StaleTempFile } from '../output/stale-temp.js';
import type { DayMode } from '../window/day-mode.js';
import type { DestinationCapabilities } from './capabilities.js';
import type { DestinationSpec } from './spec.js';
import type { StatePlace } from './state-place.js';

/** What a run's units are and how they are written: the destination shapes everything it keeps by them. */
export interface DestinationPlan {
  readonly metrics: readonly string[];
  readonly units: readonly UnitPlace[];
  readonly encoding: OutputEncoding;
  readonly layout: Layout;
  /** What the run's days are (UTC or store-local): which rows a destination of tables replaces for a unit. */
  readonly dayMode: DayMode;
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
  /** What it holds: its row beside `openDestination`, which the run reads instead of asking which kind it is. */
  readonly capabilities: DestinationCapabilities;
  /**
   * Before the run reads its state, where its row says it admits one run at a time (a database): waits here for the
   * run before it to end (SIGINT or SIGTERM, `signal`, ends the wait), and holds its turn until `close`. Files need none.
   */
  claim(signal?: AbortSignal): Promise<void>;
  /** Its connections closed (and its turn given up): the process must be free to end. */
  close(): Promise<void>;
  /** Where a unit's set-aside records go, as the run manifest names them: a file beside its data, or a database's table. */
  rejectedPlace(unit: UnitPlace, layout: Layout): string;
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

/** What a destination with no connection of its own does: no turn to take, nothing to close, set-aside records beside the unit's file. */
export const PLAIN_DESTINATION = {
  claim: (): Promise<void> => Promise.resolve(),
  close: (): Promise<void> => Promise.resolve(),
  rejectedPlace: (unit: UnitPlace, layout: Layout): string => rejectedPath(unit, layout),
} as const satisfies Pick<Destination, 'claim' | 'close' | 'rejectedPlace'>;
