import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode, UsageError } from '../../errors.js';
import { makeFolder, writeFileAtomic } from '../../output/atomic-file.js';
import { asOutputError } from '../../output/write-failure.js';
import { acquireLock } from './file-lock.js';
import { STATE_BOUNDS } from './state-bounds.js';
import { tooLargeState } from './state-file.js';
import type { StateFile } from './versions/current.js';

/**
 * Where the state's text lives. A folder keeps it in a file under a lock; an object store can keep it as an object
 * replaced by a conditional write. Either way `update` is one atomic read-merge-write against other writers.
 */
export interface StateStorage {
  /** The path or URL, for messages. */
  readonly location: string;
  /** What to tell a reader that finds no state there (`status`); by default, a state file's words. */
  readonly absence?: string;
  /** The stored text; undefined when there is none yet. */
  read(): Promise<string | undefined>;
  /**
   * Replaces the text with what `change` makes of the current one (undefined: leave it as it is), with no other
   * writer in between; a storage that detects a conflict instead of locking calls `change` again on the newer text.
   */
  update(change: (current: string | undefined) => string | undefined): Promise<void>;
  /**
   * Only a storage in the process's own memory: `update` on the state object rather than its text (`parse` reads a
   * text it was given by `update`), the object changed in place, so nothing is formatted and parsed again.
   */
  updateState?(
    change: (current: StateFile | undefined) => StateFile | undefined,
    parse: (text: string) => StateFile | undefined,
  ): Promise<void>;
}

/** The state in a local file, changed under `<file>.lock`. */
export class FileStateStorage implements StateStorage {
  constructor(readonly location: string) {}

  async read(): Promise<string | undefined> {
    try {
      // A file larger than a state is not read into memory at all.
      const { size } = await stat(this.location);
      if (size > STATE_BOUNDS.textBytes) throw tooLargeState(this.location, size);
      return await readFile(this.location, 'utf8');
    } catch (error) {
      if (error instanceof UsageError) throw error;
      if (errnoCode(error) === 'ENOENT') return undefined;
      // A path under a file (`-o /etc/hostname/sub`) is an unusable output folder, not a bad state.
      if (errnoCode(error) === 'ENOTDIR') throw asOutputError(error, `cannot read state file ${this.location}`);
      throw new UsageError(`cannot read state file ${this.location}: ${(error as Error).message}`);
    }
  }

  async update(change: (current: string | undefined) => string | undefined): Promise<void> {
    const lockPath = `${this.location}.lock`;
    let release: () => Promise<void>;
    try {
      await makeFolder(dirname(this.location));
      release = await acquireLock(lockPath);
    } catch (error) {
      throw asOutputError(error, `cannot lock the state file with ${lockPath}`);
    }
    try {
      const next = change(await this.read());
      if (next !== undefined) await writeFileAtomic(this.location, [next]);
    } finally {
      await release().catch(() => {});
    }
  }
}
