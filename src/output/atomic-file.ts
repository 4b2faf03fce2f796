import { randomBytes } from 'node:crypto';
import { link, mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { errnoCode, OutputError } from '../errors.js';
import { asOutputError } from './write-failure.js';

/** Temp files being written right now, so the process edge can remove them when it must exit at once. */
export const tempFilesInProgress = new Set<string>();

/** A hidden name next to `name`, unique to this process and write. */
function tempName(folder: string, name: string): string {
  return join(folder, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** A name made by `tempName`, with the writer's process id (`stale-temp.ts` removes those of runs that are gone). */
export const TEMP_NAME = /^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/**
 * Writes a file so that no reader and no crash ever sees half of it: a temp file in the same folder (same
 * filesystem, so the rename is atomic), every byte written, fsync, rename over the target, fsync the folder. On any
 * error or abort the temp file is removed and the old file, if any, is left untouched. A full, read-only or failing
 * disk is thrown as an `OutputError` naming `path`.
 */
export async function writeFileAtomic(path: string, chunks: Iterable<string | Uint8Array>, signal?: AbortSignal): Promise<void> {
  await placeFile(path, chunks, signal, renameOver);
}

/**
 * Like `writeFileAtomic`, unless the file already holds exactly these bytes: then it is left untouched (same inode and
 * mtime, so a loader that watches files sees no change) and false is returned. `chunks` is called once per pass.
 */
export async function writeFileAtomicIfChanged(
  path: string,
  chunks: () => Iterable<string | Uint8Array>,
  signal?: AbortSignal,
): Promise<boolean> {
  if (await holdsBytes(path, chunks())) return false;
  await writeFileAtomic(path, chunks(), signal);
  return true;
}

/** Whether the file at `path` is exactly these bytes; a file that cannot be read is not (the write then reports why). */
async function holdsBytes(path: string, chunks: Iterable<string | Uint8Array>): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return false;
  }
  try {
    const { size } = await handle.stat();
    let offset = 0;
    for (const chunk of chunks) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      if (offset + bytes.length > size) return false;
      const onDisk = Buffer.allocUnsafe(bytes.length);
      for (let read = 0; read < bytes.length; ) {
        const { bytesRead } = await handle.read(onDisk, read, bytes.length - read, offset + read);
        if (bytesRead === 0) return false;
        read += bytesRead;
      }
      if (!onDisk.equals(bytes)) return false;
      offset += bytes.length;
    }
    return offset === size;
  } catch {
    return false;
  } finally {
    await handle.close().catch(() => {});
  }
}

/**
 * Creates `path` holding these bytes unless a file of that name exists: then nothing is written and false is returned.
 * Like `writeFileAtomic`, no reader ever sees half of it: the temp file, written whole and synced, is hard-linked to
 * `path`, which fails when the name is taken (a rename would replace it), so of two writers racing for one name
 * exactly one gets it, and that file appears whole at the instant it is created.
 */
export async function createFileExclusive(path: string, chunks: Iterable<string | Uint8Array>, signal?: AbortSignal): Promise<boolean> {
  return placeFile(path, chunks, signal, linkUnlessTaken);
}

/** The folder made, the bytes written to a temp file and placed at `path`; a failure named as an `OutputError`. */
async function placeFile(
  path: string,
  chunks: Iterable<string | Uint8Array>,
  signal: AbortSignal | undefined,
  placement: Placement,
): Promise<boolean> {
  const folder = dirname(path);
  try {
    await makeFolder(folder);
  } catch (error) {
    throw asOutputError(error, `cannot create folder ${folder}`);
  }
  try {
    return await writeThenPlace(path, chunks, signal, placement);
  } catch (error) {
    throw asOutputError(error, `cannot write ${path}`);
  }
}

/** Puts the finished temp file at `path`; false when it was not put there (the name taken), and the temp is removed. */
type Placement = (temp: string, path: string) => Promise<boolean>;

const renameOver: Placement = async (temp, path) => {
  await rename(temp, path);
  return true;
};

const linkUnlessTaken: Placement = async (temp, path) => {
  try {
    await link(temp, path);
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  }
  return true;
};

async function writeThenPlace(
  path: string,
  chunks: Iterable<string | Uint8Array>,
  signal: AbortSignal | undefined,
  place: Placement,
): Promise<boolean> {
  const folder = dirname(path);
  const temp = tempName(folder, basename(path));
  const handle = await open(temp, 'wx', 0o644);
  tempFilesInProgress.add(temp);
  let renamed = false;
  try {
    for (const chunk of chunks) {
      signal?.throwIfAborted();
      await writeAll(handle, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    }
    await handle.sync();
    await handle.close();
    signal?.throwIfAborted();
    const placed = await place(temp, path);
    // A rename moved the temp file; a link (taken or not) leaves it to remove.
    renamed = place === renameOver;
    if (placed) await syncFolder(folder);
    return placed;
  } finally {
    tempFilesInProgress.delete(temp);
    if (!renamed) {
      await handle.close().catch(() => {});
      // The write's own error is the one to report; a temp file that cannot be removed either (the disk went
      // read-only) is hidden and never taken for data.
      await rm(temp, { force: true }).catch(() => {});
    }
  }
}

/**
 * Writes all of `bytes`: a write may take fewer bytes than asked (a nearly full disk takes what fits), so it goes on
 * from where the last one stopped until every byte is written or a write fails.
 */
export async function writeAll(handle: Pick<FileHandle, 'write'>, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    if (bytesWritten <= 0) {
      // No progress and no errno: report it as the failed write it is rather than loop for ever.
      throw Object.assign(new Error(`write took no bytes at offset ${offset} of ${bytes.length}`), { code: 'EIO' });
    }
    offset += bytesWritten;
  }
}

/**
 * `mkdir -p`, one folder at a time. Node's own recursive mkdir loops for ever where the kernel answers ENOENT for a
 * folder whose parent exists (`/proc/foo`); made one at a time, the error says why (EROFS, EACCES...).
 */
export async function makeFolder(folder: string): Promise<void> {
  const missing: string[] = [];
  for (let current = folder; !(await isFolder(current)); current = dirname(current)) {
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing) {
    try {
      await mkdir(path);
    } catch (error) {
      // Made meanwhile by another run writing into the same folder.
      if (errnoCode(error) === 'EEXIST' && (await isFolder(path))) continue;
      if (errnoCode(error) === 'ENOENT' && (await isFolder(dirname(path)))) {
        throw new OutputError(`cannot create folder ${path}: the file system there takes no new folders (ENOENT); choose another path`, {
          cause: error,
        });
      }
      throw error;
    }
  }
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Creates `folder` if needed and writes and removes a one-byte file in it, so a read-only, unwritable or full folder
 * is found before any request rather than after the downloads.
 */
export async function checkWritableFolder(folder: string): Promise<void> {
  try {
    await makeFolder(folder);
  } catch (error) {
    throw asOutputError(error, `cannot create folder ${folder}`);
  }
  const probe = tempName(folder, 'area-metrics-write-check');
  try {
    const handle = await open(probe, 'wx', 0o644);
    try {
      await writeAll(handle, Buffer.from('\n'));
    } finally {
      await handle.close();
    }
    await rm(probe);
  } catch (error) {
    await rm(probe, { force: true }).catch(() => {});
    throw asOutputError(error, `cannot write to folder ${folder}`);
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
