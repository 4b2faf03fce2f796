import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode } from '../errors.js';
import { TEMP_NAME } from './atomic-file.js';

/**
 * A temp file older than this is stale even if a process with its pid is alive: pids are reused, and no write of
 * one file takes this long.
 */
export const STALE_TEMP_AGE_MS = 60 * 60 * 1000;

/** Whether a process with this pid exists (one of another user counts as alive). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}

export interface StaleTempFile {
  readonly path: string;
  readonly pid: number;
  /** `gone`: its process has ended; `old`: a process with its pid runs, but the file is too old to be its. */
  readonly reason: 'gone' | 'old';
}

/**
 * Removes this tool's temp files in `folders` (not below them) that a run killed without a chance to clean up left
 * behind: those whose process is gone, or that are older than `STALE_TEMP_AGE_MS`. Never this process's own, never
 * a live run's. Returns what it removed. Best effort: a folder that cannot be read or a file that cannot be removed
 * is skipped, and the run's own writes report a folder that is not usable. `now` is the system's, as file times are,
 * never the run's clock (a test's `AREA_METRICS_NOW` would make every temp file look new or old).
 */
export async function removeStaleTempFiles(folders: readonly string[], now = Date.now()): Promise<StaleTempFile[]> {
  const removed: StaleTempFile[] = [];
  for (const folder of folders) {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = TEMP_NAME.exec(name);
      if (!match) continue;
      const pid = Number(match[1]);
      if (pid === process.pid) continue;
      const path = join(folder, name);
      const alive = isProcessAlive(pid);
      if (alive) {
        const info = await stat(path).catch(() => undefined);
        if (info === undefined || now - info.mtimeMs <= STALE_TEMP_AGE_MS) continue;
      }
      try {
        await rm(path, { force: true });
        removed.push({ path, pid, reason: alive ? 'old' : 'gone' });
      } catch {
        // Left for a later run.
      }
    }
  }
  return removed;
}
