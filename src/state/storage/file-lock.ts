import { createHash } from 'node:crypto';
import { rm, symlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { errnoCode } from '../../errors.js';
import { isStale, newHolderText, readHolder } from './lock-holder.js';

/** Points where a test holds a taker still, to force one interleaving. */
export interface LockHooks {
  /** With the guard of `path`'s holder taken, before `path` is read again and removed. */
  readonly beforeRemove?: (path: string) => Promise<void>;
  /** After `path`'s holder was judged stale, before its guard is tried. */
  readonly afterJudged?: (path: string) => Promise<void>;
  /** When this process's lock counts as taken (default: now), so that a test can make a live holder's lock old. */
  readonly since?: number;
}

/**
 * Takes the lock exclusively, waiting while another live run holds it; returns its release. The lock is a symbolic
 * link whose target names its holder (see `LockHolder`): creating it is atomic and fails if it exists, and its target
 * lives in the inode, so taking the lock needs no free block on a nearly full disk. One left by a killed run is taken
 * over at once, and one older than a minute in any case.
 *
 * A lock is only ever removed by whoever holds its guard, a second link whose name is made from the holder's
 * identity (`removeIfStill`), after reading it again under that guard: so a taker removes the stale lock it judged,
 * never a fresh one taken since, and two takers never both get through. docs/design.md walks through the
 * interleavings.
 */
export async function acquireLock(lockPath: string, hooks: LockHooks = {}): Promise<() => Promise<void>> {
  const me = newHolderText(hooks.since);
  for (let attempt = 0; ; attempt++) {
    try {
      await symlink(me, lockPath);
      return () => releaseLock(lockPath, me, hooks);
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    const holder = await readHolder(lockPath);
    // Released between our attempt and this look: simply try again.
    if (holder === undefined) continue;
    if (isStale(holder)) {
      await hooks.afterJudged?.(lockPath);
      if (await removeIfStill(lockPath, holder.text, hooks)) continue;
    }
    await pause(attempt);
  }
}

/**
 * Removes our lock unless it was taken over meanwhile (we held it longer than a minute): then it is the taker's to
 * remove, and removing it by name could remove a lock taken since.
 */
async function releaseLock(lockPath: string, me: string, hooks: LockHooks): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if ((await readHolder(lockPath))?.text !== me) return;
    if (await removeIfStill(lockPath, me, hooks)) return;
    await pause(attempt);
  }
}

/**
 * Removes `path` if it still holds `judged`, with its guard held: the guard's name is made from `judged`, so of all
 * that judged this holder only one at a time gets past it, and nothing else removes a lock. Returns whether it got
 * past (whatever it found); false while another holds the guard. A guard left by a taker that died holding it is
 * itself stale and removed the same way, under a guard of its own.
 */
async function removeIfStill(path: string, judged: string, hooks: LockHooks): Promise<boolean> {
  const guard = guardPath(path, judged);
  try {
    await symlink(newHolderText(), guard);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
    const guardHolder = await readHolder(guard);
    if (guardHolder !== undefined && isStale(guardHolder)) await removeIfStill(guard, guardHolder.text, hooks);
    return false;
  }
  try {
    await hooks.beforeRemove?.(path);
    // Under the guard nobody else removes `path` while it holds `judged`, and nobody makes it while it exists.
    if ((await readHolder(path))?.text === judged) await rm(path, { force: true });
    return true;
  } finally {
    await rm(guard, { force: true });
  }
}

/** `<path>.<16 hex digits of the holder's identity>`: one name per holder, the same for all that judged it. */
export function guardPath(path: string, holder: string): string {
  return `${path}.${createHash('sha256').update(holder).digest('hex').slice(0, 16)}`;
}

/** Short, jittered waits: the holder needs milliseconds. */
function pause(attempt: number): Promise<void> {
  return sleep(5 + Math.floor(Math.random() * Math.min(50, 5 * (attempt + 1))));
}
