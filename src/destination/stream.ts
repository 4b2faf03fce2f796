import type { Writable } from 'node:stream';
import { StreamSink, type UnitSink } from '../output/sinks.js';
import type { StaleTempFile } from '../output/stale-temp.js';
import type { Destination } from './destination.js';
import type { DestinationSpec } from './spec.js';
import { statePlace, type StatePlace } from './state-place.js';

/** `-o -`: every unit's lines on stdout, in plan order; no files, so no manifest and no lineage dataset. */
export class StreamDestination implements Destination {
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
