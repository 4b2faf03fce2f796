// A process contending for a state lock with the built code (dist/), for the lock's tests across processes. It says
// "ready" once loaded, waits for a line on stdin (so that every contender starts at once), then `rounds` times takes
// the lock and adds 1 to the counter file: a read, a pause, a write, so that two holders at once lose a count. After
// some rounds (a share of them, `abandon`) it leaves the lock to a dead process instead of releasing it, as a run
// killed while holding it would: every other contender then races to take that stale lock over. The dead holder is
// written as this release writes a holder, or as earlier ones did (the pid alone), or either at random (`mixed`).
// Usage: node lock-contender.mjs <dist> <lock> <counter> <rounds> <dead pid> <abandon 0..1> <full|bare|mixed>
import { readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

const [dist, lockPath, counterPath, rounds, deadPid, abandon, format] = /** @type {string[]} */ (process.argv.slice(2));
if (lockPath === undefined || counterPath === undefined) throw new Error('usage: lock-contender.mjs <dist> <lock> <counter> ...');
const { acquireLock } = await import(`${dist}/state/storage/file-lock.js`);
const { newHolderText } = await import(`${dist}/state/storage/lock-holder.js`);

process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.destroy();
for (let round = 0; round < Number(rounds); round++) {
  const release = await acquireLock(lockPath);
  const count = Number(await readFile(counterPath, 'utf8'));
  await sleep(1);
  await writeFile(counterPath, String(count + 1));
  if (Math.random() < Number(abandon)) {
    // Our lock replaced in one step by a dead process's: nobody else touches a live holder's lock meanwhile.
    const temp = `${lockPath}.dead-${process.pid}`;
    const bare = format === 'bare' || (format === 'mixed' && Math.random() < 0.5);
    await symlink(bare ? deadPid : newHolderText(Date.now(), Number(deadPid)), temp);
    await rename(temp, lockPath);
  } else {
    await release();
  }
}
