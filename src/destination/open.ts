import type { Writable } from 'node:stream';
import type { Credential } from '../redact.js';
import { BUCKET_CAPABILITIES, BucketDestination } from './bucket.js';
import type { DestinationCapabilities } from './capabilities.js';
import type { Destination } from './destination.js';
import { FOLDER_CAPABILITIES, FolderDestination } from './folder.js';
import type { ObjectStores } from './object-stores.js';
import { POSTGRES_CAPABILITIES, PostgresDestination } from './postgres/destination.js';
import type { SessionOptions } from './postgres/session.js';
import { storedPostgresUnits } from './postgres/stored-units.js';
import type { DestinationSpec } from './spec.js';
import { STREAM_CAPABILITIES, StreamDestination } from './stream.js';
import { noStoredUnits, storedBucketUnits, storedFolderUnits, type StoredSettings, type StoredUnits } from './stored-units.js';

/** What a destination may need to write: the command's object stores, its stdout, and what a database connection needs. */
export interface DestinationParts {
  readonly stores: ObjectStores;
  readonly stdout: Writable;
  readonly database: SessionOptions;
}

type Kind = DestinationSpec['kind'];
type SpecOf = { readonly [K in Kind]: Extract<DestinationSpec, { kind: K }> };

/** What reading an output back needs: the command's object stores and what a database connection needs. */
export type ReadBackParts = Pick<DestinationParts, 'stores' | 'database'>;

/**
 * Each kind of destination: what it holds (its row), how it is opened to write, and how what it holds is read back
 * (`backtest`). A new kind is one more row.
 */
const KINDS: { readonly [K in Kind]: KindRow<K> } = {
  folder: {
    capabilities: FOLDER_CAPABILITIES,
    open: (spec) => new FolderDestination(spec, spec.dir),
    readBack: (spec, settings) => storedFolderUnits(spec.dir, settings),
  },
  bucket: {
    capabilities: BUCKET_CAPABILITIES,
    open: (spec, { stores }) => new BucketDestination(spec, spec.location, stores),
    readBack: (spec, settings, { stores }) => storedBucketUnits(spec.location, settings, stores),
  },
  stream: {
    capabilities: STREAM_CAPABILITIES,
    open: (spec, { stdout }) => new StreamDestination(spec, stdout),
    readBack: noStoredUnits,
  },
  postgres: {
    capabilities: POSTGRES_CAPABILITIES,
    open: (spec, { database }) => new PostgresDestination(spec, spec.database, database),
    readBack: (spec, settings, { database }) => storedPostgresUnits(spec.database, settings.mode, database),
  },
};

interface KindRow<K extends Kind> {
  readonly capabilities: DestinationCapabilities;
  readonly open: (spec: SpecOf[K], parts: DestinationParts) => Destination;
  readonly readBack: (spec: SpecOf[K], settings: StoredSettings, parts: ReadBackParts) => StoredUnits;
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

/** The units the output `-o` named holds, read back as `settings` (its state's) say they were written. */
export function openStoredUnits(spec: DestinationSpec, settings: StoredSettings, parts: ReadBackParts): StoredUnits {
  return readBackKind(spec.kind, spec, settings, parts);
}

function readBackKind<K extends Kind>(kind: K, spec: SpecOf[K], settings: StoredSettings, parts: ReadBackParts): StoredUnits {
  return KINDS[kind].readBack(spec, settings, parts);
}

/** The database passwords a run may hold (in the URL, `PGPASSWORD`), so no log line or error can show one. */
export function databaseCredentials(spec: DestinationSpec, env: NodeJS.ProcessEnv): Credential[] {
  if (spec.kind !== 'postgres') return [];
  return [spec.database.password, env.PGPASSWORD].flatMap((secret) => (secret ? [{ secret }] : []));
}
