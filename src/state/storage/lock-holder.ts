import { randomBytes } from 'node:crypto';
import { lstat, readlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { errnoCode } from '../../errors.js';
import { isProcessAlive } from '../../output/stale-temp.js';

/** How long a lock may be held before another run takes it over: an update takes milliseconds. */
export const STALE_LOCK_MS = 60_000;

/**
 * Who holds a lock, as the target of the symbolic link that is the lock: `<pid> <since ms> <nonce> <host>`. The
 * nonce makes every taking of a lock a text of its own, so "still the lock I judged" is a comparison of two texts.
 */
export interface LockHolder {
  /** The link's target exactly as read: the holder's identity. */
  readonly text: string;
  /** Undefined when the pid cannot be judged (another host, or not a link this tool wrote). */
  readonly pid?: number;
  /** When it was taken, ms since the epoch. */
  readonly since: number;
}

/** A fresh identity for a process (this one) taking a lock at `since`. */
export function newHolderText(since = Date.now(), pid = process.pid): string {
  return `${pid} ${since} ${randomBytes(8).toString('hex')} ${hostname()}`;
}

const HOLDER = /^(\d+) (\d+) [0-9a-f]+ (.+)$/s;
/** What earlier releases wrote: the pid alone. */
const BARE_PID = /^\d+$/;

/** Who holds the lock at `path` now; undefined when nothing is there. */
export async function readHolder(path: string): Promise<LockHolder | undefined> {
  try {
    const info = await lstat(path);
    // Not a link (a hand-made file): judged by its age alone, named by its inode and time.
    if (!info.isSymbolicLink()) return { text: `inode ${info.ino} ${info.mtimeMs}`, since: info.mtimeMs };
    const text = await readlink(path);
    const match = HOLDER.exec(text);
    if (match !== null) {
      const sameHost = match[3] === hostname();
      return { text, since: Number(match[2]), ...(sameHost ? { pid: Number(match[1]) } : {}) };
    }
    return { text, since: info.mtimeMs, ...(BARE_PID.test(text) ? { pid: Number(text) } : {}) };
  } catch (error) {
    // Released (or replaced by something that is not a link) between the two looks: nothing to judge now.
    if (['ENOENT', 'EINVAL'].includes(errnoCode(error) ?? '')) return undefined;
    throw error;
  }
}

/** A holder whose process is gone (on this host), or that has held the lock longer than any update takes. */
export function isStale(holder: LockHolder, now = Date.now()): boolean {
  const { pid } = holder;
  if (pid !== undefined && Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) return true;
  return now - holder.since > STALE_LOCK_MS;
}
