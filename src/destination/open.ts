import type { Writable } from 'node:stream';
import type { Credential } from '../redact.js';
import { BUCKET_CAPABILITIES, BucketDestination } from './bucket.js';
import type { DestinationCapabilities } from './capabilities.js';
import type { Destination } from './destination.js';
import { FOLDER_CAPABILITIES, FolderDestination } from './folder.js';
import type { ObjectStores } from './object-stores.js';
import { POSTGRES_CAPABILITIES, PostgresDestination } from './postgres/destination.js';
import type { SessionOptions } from './postgres/session.js';
import type { DestinationSpec } from './spec.js';
import { STREAM_CAPABILITIES, StreamDestination } from './stream.js';

/** What a destination may need to write: the command's object stores, its stdout, and what a database connection needs. */
export interface DestinationParts {
  readonly stores: ObjectStores;
  readonly stdout: Writable;
  readonly database: SessionOptions;
}

type Kind = DestinationSpec['kind'];
type SpecOf = { readonly [K in Kind]: Extract<DestinationSpec, { kind: K }> };

/** Each kind of destination: what it holds (its row), and how it is opened. A new kind is one more row. */
const KINDS: { readonly [K in Kind]: KindRow<K> } = {
  folder: { capabilities: FOLDER_CAPABILITIES, open: (spec) => new FolderDestination(spec, spec.dir) },
  bucket: { capabilities: BUCKET_CAPABILITIES, open: (spec, { stores }) => new BucketDestination(spec, spec.location, stores) },
  stream: { capabilities: STREAM_CAPABILITIES, open: (spec, { stdout }) => new StreamDestination(spec, stdout) },
  postgres: { capabilities: POSTGRES_CAPABILITIES, open: (spec, { database }) => new PostgresDestination(spec, spec.database, database) },
};

interface KindRow<K extends Kind> {
  readonly capabilities: DestinationCapabilities;
  readonly open: (spec: SpecOf[K], parts: DestinationParts) => Destination;
}

/** What the destination `-o` named holds, read before it is opened (a run's options are checked against it). */
export function capabilitiesOf(spec: DestinationSpec): DestinationCapabilities {
  return KINDS[spec.kind].capabilities;
}

/** The run's destination for what `-o` named: the one place that asks which kind it is. */
export function openDestination(spec: DestinationSpec, parts: DestinationParts): Destination {
  return openKind(spec.kind, spec, parts);
}

/** A kind's row opens a spec of that kind (the kind as its own parameter, so the compiler pairs row and spec). */
function openKind<K extends Kind>(kind: K, spec: SpecOf[K], parts: DestinationParts): Destination {
  return KINDS[kind].open(spec, parts);
}

/** The database passwords a run may hold (in the URL, `PGPASSWORD`), so no log line or error can show one. */
export function databaseCredentials(spec: DestinationSpec, env: NodeJS.ProcessEnv): Credential[] {
  if (spec.kind !== 'postgres') return [];
  return [spec.database.password, env.PGPASSWORD].flatMap((secret) => (secret ? [{ secret }] : []));
}
