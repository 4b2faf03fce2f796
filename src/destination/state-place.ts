import { dirname, join } from 'node:path';
import { checkWritableFolder } from '../output/atomic-file.js';
import { COVERAGE_FOLDER } from '../output/coverage-file.js';
import { isObjectUrl, objectKey, parseObjectUrl } from '../output/object-location.js';
import { RUNS_FOLDER } from '../output/run-manifest.js';
import { removeStaleTempFiles, type StaleTempFile } from '../output/stale-temp.js';
import { ObjectStateStorage } from '../state/storage/object-state.js';
import { FileStateStorage, type StateStorage } from '../state/storage/storage.js';
import {
  bucketCoverageWriter,
  bucketManifests,
  CoverageWritingStorage,
  folderCoverageWriter,
  folderManifests,
  type CoverageShelf,
} from './coverage-storage.js';
import type { ObjectStores } from './object-stores.js';
import type { DestinationSpec } from './spec.js';

/** Where a run's state is kept: `--state` (a file or `s3://bucket/key`) if given, else beside the destination's data. */
export interface StatePlace {
  /** The path or URL, for messages. */
  readonly url: string;
  /** In a bucket or a database: reading it needs a connection (a dry run of named days does without). */
  readonly remote: boolean;
  storage(stores: ObjectStores): Promise<StateStorage>;
  /** Before an import writes: a state file's folder is checked writable and cleared of killed runs' temp files. */
  prepare(): Promise<readonly StaleTempFile[]>;
}

/** The state's place for a destination and `--state`; undefined where there is none (stdout without `--state`). */
export function statePlace(destination: DestinationSpec, state: string | undefined): StatePlace | undefined {
  const url = state ?? destination.stateUrl;
  if (url === undefined) return undefined;
  if (!isObjectUrl(url)) {
    const folder = dirname(url);
    return {
      url,
      remote: false,
      storage: (stores) => withCoverage(destination, stores, new FileStateStorage(url), folderCoverageWriter(url)),
      prepare: async () => {
        await checkWritableFolder(folder);
        return removeStaleTempFiles([folder, join(folder, COVERAGE_FOLDER)]);
      },
    };
  }
  const { bucket, prefix } = parseObjectUrl(url, '--state');
  return {
    url,
    remote: true,
    storage: async (stores) => {
      const store = await stores.get(bucket);
      return withCoverage(destination, stores, new ObjectStateStorage(store, prefix), bucketCoverageWriter(store, prefix));
    },
    prepare: () => Promise.resolve([]),
  };
}

/**
 * The state of a folder or bucket output, with its coverage table rewritten beside it after each write; each day's
 * rows and load time from the output's run manifests, wherever the state is. A stream's `--state` has no output to
 * keep a table for: it is the state alone.
 */
async function withCoverage(
  destination: DestinationSpec,
  stores: ObjectStores,
  state: StateStorage,
  write: CoverageShelf['write'],
): Promise<StateStorage> {
  if (destination.kind === 'bucket') {
    const { location } = destination;
    const manifests = bucketManifests(await stores.get(location.bucket), objectKey(location, `${RUNS_FOLDER}/`));
    return new CoverageWritingStorage(state, { ...manifests, write });
  }
  if (destination.kind === 'folder') return new CoverageWritingStorage(state, { ...folderManifests(destination.dir), write });
  return state;
}
