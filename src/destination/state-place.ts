import { dirname } from 'node:path';
import { checkWritableFolder } from '../output/atomic-file.js';
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
      storage: async (stores) =>
        new CoverageWritingStorage(new FileStateStorage(url), {
          ...(await manifestsOf(destination, stores)),
          write: folderCoverageWriter(url),
        }),
      prepare: async () => {
        await checkWritableFolder(folder);
        return removeStaleTempFiles([folder]);
      },
    };
  }
  const { bucket, prefix } = parseObjectUrl(url, '--state');
  return {
    url,
    remote: true,
    storage: async (stores) => {
      const store = await stores.get(bucket);
      const write = bucketCoverageWriter(store, prefix);
      return new CoverageWritingStorage(new ObjectStateStorage(store, prefix), { ...(await manifestsOf(destination, stores)), write });
    },
    prepare: () => Promise.resolve([]),
  };
}

/** The run manifests the coverage table takes each day's rows and load time from: the output's, wherever the state is. */
async function manifestsOf(destination: DestinationSpec, stores: ObjectStores): Promise<Omit<CoverageShelf, 'write'>> {
  if (destination.kind === 'bucket') {
    const { location } = destination;
    return bucketManifests(await stores.get(location.bucket), objectKey(location, `${RUNS_FOLDER}/`));
  }
  return folderManifests(destination.kind === 'folder' ? destination.dir : undefined);
}
