import { spawn } from 'node:child_process';
import { readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, guardPath, type LockHooks } from '../../../src/state/storage/file-lock.js';
import { newHolderText, readHolder } from '../../../src/state/storage/lock-holder.js';
import { assertBuilt, ROOT } from '../../helpers/cli.js';
import { deadPid } from '../../helpers/pids.js';
import { useTempDirs } from '../../helpers/tmp.js';

const tempDir = useTempDirs('lock-takeover-');
let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await tempDir();
  lock = join(dir, 'state.json.lock');
});

/** A point a taker stops at until the test lets it go on. */
function gate(): { reached: Promise<void>; open: () => void; hook: () => Promise<void> } {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { reached, open, hook: () => (reach(), opened) };
}

/** Whether the promise has settled after the event loop had a while to settle it (a negative check). */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await sleep(200);
  return settled;
}

const DEAD_SINCE_NOW = async (): Promise<string> => newHolderText(Date.now(), await deadPid());

/** The lock held by a process that died: stale, for the next taker to take over. Its holder's text. */
async function staleLock(): Promise<string> {
  const dead = await DEAD_SINCE_NOW();
  await symlink(dead, lock);
  return dead;
}

/** A taker of the lock stopped at `at` (one of its hooks) until the test opens the gate. */
async function takerStoppedAt(at: 'beforeRemove' | 'afterJudged'): Promise<{ taking: Promise<() => Promise<void>>; open: () => void }> {
  const stop = gate();
  const taking = acquireLock(lock, at === 'beforeRemove' ? { beforeRemove: stop.hook } : { afterJudged: stop.hook });
  await stop.reached;
  return { taking, open: stop.open };
}

describe('taking over a stale lock, one interleaving at a time', () => {
  it('two takers of one dead holder: the second finds its guard taken, and only one at a time holds the lock', async () => {
    await staleLock();
    const first = await takerStoppedAt('beforeRemove');
    const a = first.taking;
    const b = acquireLock(lock);
    expect(await settledSoon(b)).toBe(false);
    first.open();
    // Once the dead lock is gone either may take it; the other waits for its release.
    const [winner, loser] = await Promise.race([a.then(() => [a, b]), b.then(() => [b, a])]);
    expect(await settledSoon(loser!)).toBe(false);
    await (await winner!)();
    await (await loser!)();
    expect(await readdir(dir)).toEqual([]);
  });

  it("a taker that judged a dead holder after another took over leaves the new holder's lock alone", async () => {
    await staleLock();
    const late = await takerStoppedAt('afterJudged');
    // Meanwhile another taker removes the dead lock and holds it: what the earlier release removed by name.
    const releaseA = await acquireLock(lock);
    const holder = (await readHolder(lock))?.text;
    late.open();
    expect(await settledSoon(late.taking)).toBe(false);
    expect((await readHolder(lock))?.text).toBe(holder);
    await releaseA();
    await (await late.taking)();
  });

  it('a live holder older than a minute releasing while a taker removes its lock: the taker holds it, the release leaves it', async () => {
    const releaseOld = await acquireLock(lock, { since: Date.now() - 120_000 });
    const taker = await takerStoppedAt('beforeRemove');
    const released = releaseOld();
    expect(await settledSoon(released)).toBe(false);
    taker.open();
    const releaseTaker = await taker.taking;
    await released;
    const holder = await readHolder(lock);
    expect(holder?.pid).toBe(process.pid);
    expect(Date.now() - (holder?.since ?? 0)).toBeLessThan(60_000);
    await releaseTaker();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a holder older than a minute that releases first: the taker waits for that release, then holds the lock', async () => {
    const releasing = gate();
    const hooks: LockHooks = { since: Date.now() - 120_000, beforeRemove: releasing.hook };
    const releaseOld = await acquireLock(lock, hooks);
    const released = releaseOld();
    await releasing.reached;
    const taker = acquireLock(lock);
    expect(await settledSoon(taker)).toBe(false);
    releasing.open();
    await released;
    await (await taker)();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a taker that died holding the guard: its guard is stale too, and the next one takes both over', async () => {
    const dead = await staleLock();
    await symlink(await DEAD_SINCE_NOW(), guardPath(lock, dead));
    const release = await acquireLock(lock);
    expect((await readHolder(lock))?.pid).toBe(process.pid);
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it("another host's holder is judged by its age, not its pid", async () => {
    const pid = await deadPid();
    const otherHost = (since: number): string => `${pid} ${since} 0123456789abcdef other-host.example`;
    await symlink(otherHost(Date.now()), lock);
    const waiting = acquireLock(lock);
    expect(await settledSoon(waiting)).toBe(false);
    // The same holder, a minute and more later (swapped in one step, as time passing would).
    await symlink(otherHost(Date.now() - 120_000), `${lock}.older`);
    await rename(`${lock}.older`, lock);
    await (await waiting)();
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('taking over a stale lock across processes', () => {
  it('12 processes taking the lock in turns, each leaving it to a dead process now and then: no count lost', async () => {
    assertBuilt();
    const counter = join(dir, 'counter');
    await writeFile(counter, '0');
    const dead = await deadPid();
    await symlink(String(dead), lock);
    const rounds = 20;
    const script = join(ROOT, 'test/helpers/lock-contender.mjs');
    const args = [script, join(ROOT, 'dist'), lock, counter, String(rounds), String(dead), '0.3', 'mixed'];
    const contenders = Array.from({ length: 12 }, () => spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] }));
    const exits = contenders.map((child) => new Promise<number | null>((resolve) => child.once('exit', resolve)));
    await Promise.all(contenders.map((child) => new Promise((resolve) => child.stdout.once('data', resolve))));
    for (const child of contenders) child.stdin.write('go\n');
    expect(await Promise.all(exits)).toEqual(contenders.map(() => 0));
    expect(Number(await readFile(counter, 'utf8'))).toBe(12 * rounds);
  }, 60_000);
});
