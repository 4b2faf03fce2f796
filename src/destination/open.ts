import type { Writable } from 'node:stream';
import type { Credential } from '../redact.js';
import { BucketDestination } from './bucket.js';
import type { Destination } from './destination.js';
import { FolderDestination } from './folder.js';
import type { ObjectStores } from './object-stores.js';
import { PostgresDestination } from './postgres/destination.js';
import type { SessionOptions } from './postgres/session.js';
import type { DestinationSpec } from './spec.js';
import { StreamDestination } from './stream.js';

/** What a destination may need to write: the command's object stores, its stdout, and what a database connection needs. */
export interface DestinationParts {
  readonly stores: ObjectStores;
  readonly stdout: Writable;
  readonly database: SessionOptions;
}

/** The run's destination for what `-o` named: the one place that asks which kind it is. */
export function openDestination(spec: DestinationSpec, { stores, stdout, database }: DestinationParts): Destination {
  switch (spec.kind) {
    case 'folder':
      return new FolderDestination(spec, spec.dir);
    case 'bucket':
      return new BucketDestination(spec, spec.location, stores);
    case 'stream':
      return new StreamDestination(spec, stdout);
    case 'postgres':
      return new PostgresDestination(spec, spec.database, database);
  }
}

/** The database passwords a run may hold (in the URL, `PGPASSWORD`), so no log line or error can show one. */
export function databaseCredentials(spec: DestinationSpec, env: NodeJS.ProcessEnv): Credential[] {
  if (spec.kind !== 'postgres') return [];
  return [spec.database.password, env.PGPASSWORD].flatMap((secret) => (secret ? [{ secret }] : []));
}
