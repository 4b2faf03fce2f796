#!/usr/bin/env node
// Runs npm scripts at the same time and fails if any fails: `node scripts/side-by-side.mjs lint typecheck test:run`.
// The last one's output is shown as it comes (the tests, whose progress is worth watching); the others' is held and
// shown whole when each ends, so their lines do not interleave. Arguments after `--` go to the last script.
// Why side by side: lint and typecheck are single-threaded, and the tests often wait on servers and disks; on two
// cores, running them together takes about the time of the tests alone, the others yielding to them (yieldTo).
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

const separator = process.argv.indexOf('--');
const names = process.argv.slice(2, separator === -1 ? undefined : separator);
const extra = separator === -1 ? [] : process.argv.slice(separator + 1);
if (names.length === 0) {
  console.error('usage: side-by-side.mjs <npm script>... [-- <arguments for the last one>]');
  process.exit(2);
}
const npm = process.env.npm_execpath;
// vitest colours its output whenever CI is set, terminal or not; a log or a pipe should hold plain text, so off a
// terminal the scripts are asked for none (FORCE_COLOR, set by whoever wants it, still wins).
const plain = !process.stdout.isTTY && process.env.FORCE_COLOR === undefined;
const env = plain ? { ...process.env, NO_COLOR: '1' } : process.env;

/**
 * The held scripts run at a lower priority (niceness 5) than the streamed one. `check` is pure CPU; the tests wait on
 * servers, timers and processes between bursts of work. Yielding, `check` takes the CPU the tests leave and the tests'
 * bursts are not slowed: on two cores `npm test` took about 82 s instead of 92, both ending together (niceness 3 and
 * 10 did no better; at 10 `check` ends last). The child is npm, which starts the script's process after this.
 * @param {number} pid
 */
function yieldTo(pid) {
  try {
    setPriority(pid, 5);
  } catch {
    // Not allowed here (some containers): the scripts share the CPU evenly, as before.
  }
}

/**
 * Runs `npm run <name>`; resolves with its exit code and its duration, once its held output (unless streamed) is shown.
 * @param {string} name
 * @param {readonly string[]} args
 * @param {boolean} stream
 * @returns {Promise<{ name: string, code: number, seconds: number }>}
 */
function run(name, args, stream) {
  const started = Date.now();
  const command = npm ? process.execPath : 'npm';
  const commandArgs = [...(npm ? [npm] : []), 'run', '--silent', name, ...(args.length > 0 ? ['--', ...args] : [])];
  const child = spawn(command, commandArgs, { env, stdio: stream ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
  if (!stream && child.pid !== undefined) yieldTo(child.pid);
  /** @type {Buffer[]} */
  const held = [];
  child.stdout?.on('data', (chunk) => held.push(chunk));
  child.stderr?.on('data', (chunk) => held.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => {
      process.stdout.write(`\n== ${name}\n${error.message}\n`);
      resolve({ name, code: 1, seconds: 0 });
    });
    child.on('close', (code, signal) => {
      const output = Buffer.concat(held).toString('utf8');
      if (!stream && output !== '') process.stdout.write(`\n== ${name}\n${output}`);
      resolve({ name, code: code ?? (signal ? 1 : 0), seconds: (Date.now() - started) / 1000 });
    });
  });
}

const results = await Promise.all(
  names.map((name, index) => run(name, index === names.length - 1 ? extra : [], index === names.length - 1)),
);
console.log('');
for (const { name, code, seconds } of results) console.log(`${code === 0 ? 'ok  ' : 'FAIL'} ${name} (${seconds.toFixed(1)} s)`);
process.exitCode = results.some((result) => result.code !== 0) ? 1 : 0;
