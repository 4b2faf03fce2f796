import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Temp files being written right now, so the process edge can remove them when it must exit at once. */
export const tempFilesInProgress = new Set<string>();

/**
 * Writes a file so that no reader and no crash ever sees half of it: a temp file in the same folder (same
 * filesystem, so the rename is atomic), fsync, rename over the target, fsync the folder. On any error or abort
 * the temp file is removed and the old file, if any, is left untouched.
 */
export async function writeFileAtomic(path: string, chunks: Iterable<string | Uint8Array>, signal?: AbortSignal): Promise<void> {
  const folder = dirname(path);
  await mkdir(folder, { recursive: true });
  const temp = join(folder, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o644);
  tempFilesInProgress.add(temp);
  let renamed = false;
  try {
    for (const chunk of chunks) {
      signal?.throwIfAborted();
      await handle.write(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    }
    await handle.sync();
    await handle.close();
    signal?.throwIfAborted();
    await rename(temp, path);
    renamed = true;
    await syncFolder(folder);
  } finally {
    tempFilesInProgress.delete(temp);
    if (!renamed) {
      await handle.close().catch(() => {});
      await rm(temp, { force: true });
    }
  }
}

async function syncFolder(folder: string): Promise<void> {
  // Makes the rename itself durable; not every platform lets a folder be opened for fsync.
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort.
  }
}
