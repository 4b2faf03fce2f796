import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The temp files `writeFileAtomic` names `.<name>.<pid>.<8 hex>.tmp`: the pid says which process writes it, so a
 * later run can tell a file left by a killed run from one being written right now.
 */
const TEMP_FILE = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;

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
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface StaleTempFile {
  readonly path: string;
  readonly pid: number;
}

/**
 * Removes this tool's temp files in `folders` (not below them) that a run killed without a chance to clean up left
 * behind: those whose process is gone, or that are older than `STALE_TEMP_AGE_MS`. Never this process's own, never
 * a live run's. Returns what it removed; a folder that does not exist is skipped.
 */
export async function removeStaleTempFiles(folders: readonly string[], now = Date.now()): Promise<StaleTempFile[]> {
  const removed: StaleTempFile[] = [];
  for (const folder of folders) {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      throw error;
    }
    for (const name of names) {
      const match = TEMP_FILE.exec(name);
      if (!match) continue;
      const pid = Number(match[1]);
      if (pid === process.pid) continue;
      const path = join(folder, name);
      if (isProcessAlive(pid)) {
        const info = await stat(path).catch(() => undefined);
        if (info === undefined || now - info.mtimeMs <= STALE_TEMP_AGE_MS) continue;
      }
      await rm(path, { force: true });
      removed.push({ path, pid });
    }
  }
  return removed;
}
