import { dirname } from 'node:path';
import { checkWritableFolder } from '../output/atomic-file.js';
import { isObjectUrl, parseObjectUrl } from '../output/object-location.js';
import { removeStaleTempFiles, type StaleTempFile } from '../output/stale-temp.js';
import { ObjectStateStorage } from '../state/storage/object-state.js';
import { FileStateStorage, type StateStorage } from '../state/storage/storage.js';
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
      storage: () => Promise.resolve(new FileStateStorage(url)),
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
    storage: async (stores) => new ObjectStateStorage(await stores.get(bucket), prefix),
    prepare: () => Promise.resolve([]),
  };
}
