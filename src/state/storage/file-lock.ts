import { lstat, readlink, rm, symlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { errnoCode } from '../../errors.js';
import { isProcessAlive } from '../../output/stale-temp.js';

/** How long a lock may be held before another run takes it over: an update takes milliseconds. */
const STALE_LOCK_MS = 60_000;

/**
 * Takes the lock exclusively, waiting while another live run holds it; returns its release. The lock is a symbolic
 * link whose target is the holder's pid: creating it is atomic and fails if it exists, and its target lives in the
 * inode, so taking the lock needs no free block on a nearly full disk. One left by a killed run is taken over at
 * once, and one older than a minute in any case.
 */
export async function acquireLock(lockPath: string): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      await symlink(String(process.pid), lockPath);
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    if (await isStaleLock(lockPath)) {
      await rm(lockPath, { force: true });
      continue;
    }
    // Short, jittered waits: the holder needs milliseconds.
    await sleep(5 + Math.floor(Math.random() * Math.min(50, 5 * (attempt + 1))));
  }
}

async function isStaleLock(lockPath: string): Promise<boolean> {
  try {
    const info = await lstat(lockPath);
    const pid = info.isSymbolicLink() ? Number(await readlink(lockPath)) : Number.NaN;
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) return true;
    return Date.now() - info.mtimeMs > STALE_LOCK_MS;
  } catch (error) {
    // Released between our attempt and this look: simply try again.
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}
