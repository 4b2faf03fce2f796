import { errnoCode, OutputError } from '../errors.js';

interface Failure {
  /** What went wrong, in words a user acts on. */
  readonly reason: string;
  /** What to do about it. */
  readonly remedy: string;
}

const PERMISSION: Failure = { reason: 'permission denied', remedy: "check the folder's owner and permissions" };

/**
 * The errno codes that mean "the disk or the system refused", not "the tool is wrong". Any other code (EBADF,
 * EINVAL...) would be a bug and stays an internal error.
 */
const FAILURES: Readonly<Record<string, Failure>> = {
  ENOSPC: { reason: 'disk full', remedy: 'free some space and run again' },
  EDQUOT: { reason: 'quota exceeded', remedy: 'free some space or raise the quota, and run again' },
  EROFS: { reason: 'read-only file system', remedy: 'mount it read-write or choose another folder' },
  EACCES: PERMISSION,
  EPERM: PERMISSION,
  EIO: { reason: 'I/O error', remedy: 'check the disk and run again' },
  EMFILE: { reason: 'too many open files', remedy: 'raise the open-file limit (ulimit -n) or lower --concurrency' },
  ENFILE: { reason: 'too many open files on this system', remedy: 'close other programs or raise the system limit' },
  ENAMETOOLONG: { reason: 'file name too long', remedy: 'choose a shorter output path' },
  ENOTDIR: { reason: 'a part of the path is a file, not a folder', remedy: 'move that file or choose another path' },
  EEXIST: { reason: 'a file is in the way of a folder', remedy: 'move that file or choose another path' },
  EISDIR: { reason: 'a folder is in the way of the file', remedy: 'move that folder or choose another path' },
  ENOENT: { reason: 'the folder disappeared while writing', remedy: 'check what removes it and run again' },
  ELOOP: { reason: 'too many symbolic links in the path', remedy: 'fix the links or choose another path' },
  EFBIG: { reason: 'file too large for this file system', remedy: 'choose another file system' },
  ESTALE: { reason: 'stale network file handle', remedy: 'remount the network share and run again' },
};

/**
 * An `OutputError` naming `what` (`cannot write out/traffic/2026-11-20.csv`) and why, when `error` means the disk
 * refused; `error` itself otherwise (an interrupt, a bug), so callers can always `throw asOutputError(...)`.
 */
export function asOutputError<T>(error: T, what: string): T | OutputError {
  if (error instanceof OutputError) return error;
  const code = errnoCode(error);
  const failure = code === undefined ? undefined : FAILURES[code];
  if (failure === undefined) return error;
  return new OutputError(`${what}: ${failure.reason} (${code}); ${failure.remedy}`, { cause: error });
}
