import type { Writable } from 'node:stream';
import { StreamSink, type UnitSink } from '../output/sinks.js';
import type { StaleTempFile } from '../output/stale-temp.js';
import type { DestinationCapabilities } from './capabilities.js';
import { PLAIN_DESTINATION, type Destination } from './destination.js';
import type { DestinationSpec } from './spec.js';
import { statePlace, type StatePlace } from './state-place.js';

/**
 * What stdout holds: one stream of lines, so no files (no layout, no Parquet, whose reader needs the whole file) and
 * one CSV header for all (one metric's CSV only); a state only where `--state` names one, which keeps its day mode.
 */
export const STREAM_CAPABILITIES: DestinationCapabilities = {
  files: false,
  formats: ['csv', 'ndjson'],
  defaultFormat: 'ndjson',
  shapes: ['rows', 'results'],
  state: 'named-only',
  keeps: ['mode'],
  sharedHeader: true,
  commitsAhead: false,
  oneRunAtATime: false,
  refusals: {
    format: 'Parquet is written to files only (a reader needs the whole file); use -o <dir>',
    layout: '--layout names files in a folder or bucket; stdout (-o -) has none',
    'csv-of-many-metrics': 'CSV on stdout needs a single metric (their columns differ); use --format ndjson or -o <dir>',
    'catch-up-without-state': '--catch-up with -o - needs --state <file> to remember the last complete day',
  },
};

/** `-o -`: every unit's lines on stdout, in plan order; no files, so no manifest and no lineage dataset. */
export class StreamDestination implements Destination {
  readonly capabilities = STREAM_CAPABILITIES;
  readonly claim = PLAIN_DESTINATION.claim;
  readonly close = PLAIN_DESTINATION.close;
  /** Nothing is set aside anywhere a manifest could name (stdout has none): the path a folder would use. */
  readonly rejectedPlace = PLAIN_DESTINATION.rejectedPlace;

  constructor(
    readonly spec: DestinationSpec,
    private readonly stream: Writable,
  ) {}

  prepare(): Promise<readonly StaleTempFile[]> {
    return Promise.resolve([]);
  }

  sink(): Promise<UnitSink> {
    return Promise.resolve(new StreamSink(this.stream));
  }

  manifests(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  storedFile(): Promise<undefined> {
    return Promise.resolve(undefined);
  }

  dataset(): undefined {
    return undefined;
  }

  statePlace(state: string | undefined): StatePlace | undefined {
    return statePlace(this.spec, state);
  }
}
