import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { isObjectUrl, objectKey, objectUrl, parseObjectUrl, type ObjectLocation } from '../output/object-location.js';
import { isPostgresUrl, parsePostgresUrl, type PostgresUrl } from './postgres/url.js';

/** The state's name beside the data: a file in the output folder, or an object under the bucket's prefix. */
export const STATE_FILE_NAME = '.area-metrics-state.json';

/** What `-o` is for stdout. */
const STDOUT = '-';

/**
 * Where an import writes, as `-o` names it: read once, into plain data. `openDestination` makes it the run's
 * `Destination`, and `capabilitiesOf` says what it holds; nothing outside this folder asks which kind it is.
 */
export type DestinationSpec =
  | (DestinationNames & { readonly kind: 'folder'; readonly dir: string })
  | (DestinationNames & { readonly kind: 'bucket'; readonly location: ObjectLocation })
  | (DestinationNames & { readonly kind: 'stream' })
  | (DestinationNames & { readonly kind: 'postgres'; readonly database: PostgresUrl });

/** What every destination says of itself. */
export interface DestinationNames {
  /** How logs, the manifest and the state's last run name it: a folder, `s3://bucket/prefix`, or `stdout`. */
  readonly name: string;
  /** The `-o` that names it on another command line (none for stdout). */
  readonly output: string | undefined;
  /** Where its state is kept unless `--state` names another place; none for stdout. */
  readonly stateUrl: string | undefined;
}

/**
 * An `-o` value as a destination: `-` (stdout), `s3://bucket/prefix` or `postgresql://...` (checked now), or a
 * folder. Blank is refused: it would quietly mean the current folder.
 */
export function destinationSpec(text: string, source: string): DestinationSpec {
  if (text.trim() === '') throw new UsageError('-o/--output needs a folder, s3://bucket/prefix, postgresql://..., or - for stdout');
  if (text === STDOUT) return { kind: 'stream', name: 'stdout', output: undefined, stateUrl: undefined };
  if (isPostgresUrl(text)) {
    const database = parsePostgresUrl(text, source);
    // Its state is a row of a table beside the data: no file or object names it.
    return { kind: 'postgres', database, name: database.shown, output: database.shown, stateUrl: undefined };
  }
  if (isObjectUrl(text)) {
    const location = parseObjectUrl(text, source);
    return {
      kind: 'bucket',
      location,
      name: text,
      output: text,
      stateUrl: objectUrl(location.bucket, objectKey(location, STATE_FILE_NAME)),
    };
  }
  return { kind: 'folder', dir: text, name: text, output: text, stateUrl: join(text, STATE_FILE_NAME) };
}

/** A `--state` value: a file, or an object named by a full `s3://bucket/key`. Blank is refused. */
export function checkStateUrl(text: string, source: string): string {
  if (text.trim() === '') throw new UsageError(`${source} needs a file path or s3://bucket/key`);
  if (isObjectUrl(text) && parseObjectUrl(text, source).prefix === '') {
    throw new UsageError(`${source} ${JSON.stringify(text)} names a bucket but no object; write s3://bucket/path/state.json`);
  }
  return text;
}
