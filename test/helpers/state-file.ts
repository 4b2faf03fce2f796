import { ImportState } from '../../src/state/import-state.js';
import type { StateLoadOptions } from '../../src/state/storage/state-file.js';
import { FileStateStorage } from '../../src/state/storage/storage.js';

/** The state kept in a file at `path`, as a folder's import loads it. */
export function loadStateFile(path: string, options: StateLoadOptions): Promise<ImportState> {
  return ImportState.load(new FileStateStorage(path), options);
}

/** Like `loadStateFile`, but no file there is an error, as for `status`. */
export function loadExistingStateFile(path: string, options: StateLoadOptions): Promise<ImportState> {
  return ImportState.loadExisting(new FileStateStorage(path), options);
}
