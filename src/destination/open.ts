import type { Writable } from 'node:stream';
import { BucketDestination } from './bucket.js';
import type { Destination } from './destination.js';
import { FolderDestination } from './folder.js';
import type { ObjectStores } from './object-stores.js';
import type { DestinationSpec } from './spec.js';
import { StreamDestination } from './stream.js';

/** What a destination may need to write: the command's object stores and its stdout. */
export interface DestinationParts {
  readonly stores: ObjectStores;
  readonly stdout: Writable;
}

/** The run's destination for what `-o` named: the one place that asks which kind it is. */
export function openDestination(spec: DestinationSpec, { stores, stdout }: DestinationParts): Destination {
  switch (spec.kind) {
    case 'folder':
      return new FolderDestination(spec, spec.dir);
    case 'bucket':
      return new BucketDestination(spec, spec.location, stores);
    case 'stream':
      return new StreamDestination(spec, stdout);
  }
}
