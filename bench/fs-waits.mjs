// Preloaded by bench/breakdown.mjs (`node --import ./bench/fs-waits.mjs`) into the importer: times its file-system
// waits from outside its code (the product is not changed and pays nothing when this is not loaded). Each kind of
// call (open, write, fsync, rename, link, close, unlink) is counted with the wall time during which at least one of
// its calls was pending (the union of their intervals: calls overlap), and written as JSON to the file named by
// BENCH_FS_WAITS when the process exits. A CPU profile cannot show these: the work is done on libuv's threads while
// the main thread idles.
import { writeFileSync } from 'node:fs';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

const target = process.env.BENCH_FS_WAITS;

/** @type {Map<string, { calls: number, pending: number, since: number, wallMs: number }>} */
const kinds = new Map();

/** @param {string} kind */
function begin(kind) {
  const entry = kinds.get(kind) ?? { calls: 0, pending: 0, since: 0, wallMs: 0 };
  kinds.set(kind, entry);
  entry.calls++;
  if (entry.pending++ === 0) entry.since = performance.now();
  return () => {
    if (--entry.pending === 0) entry.wallMs += performance.now() - entry.since;
  };
}

/**
 * Replaces `owner[name]` (an async function) by one that times its calls as `kind`.
 * @param {Record<string, any>} owner @param {string} name @param {string} kind
 */
function timed(owner, name, kind) {
  const original = owner[name];
  owner[name] = async function (/** @type {unknown[]} */ ...args) {
    const end = begin(kind);
    try {
      return await original.apply(this, args);
    } finally {
      end();
    }
  };
}

if (target) {
  // The FileHandle class is not exported: take its prototype from a handle.
  const handle = await fsPromises.open('/dev/null', 'r');
  const prototype = Object.getPrototypeOf(handle);
  await handle.close();
  /** @type {[string, string][]} */
  const methods = [
    ['write', 'write'],
    ['writeFile', 'write'],
    ['sync', 'fsync'],
    ['datasync', 'fsync'],
    ['close', 'close'],
    ['read', 'read'],
  ];
  for (const [name, kind] of methods) timed(prototype, name, kind);
  for (const name of ['open', 'rename', 'link', 'unlink', 'mkdir', 'stat']) timed(fsPromises, name, name);
  // `import { open } from 'node:fs/promises'` binds to the module's exports: bring them up to date.
  syncBuiltinESMExports();
  process.on('exit', () => {
    const waits = Object.fromEntries([...kinds].map(([kind, { calls, wallMs }]) => [kind, { calls, wallMs }]));
    writeFileSync(target, JSON.stringify(waits));
  });
}
