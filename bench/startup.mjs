// Start-up: `area-metrics --version` and `--help` against bare `node -e 0`, the same node binary, interleaved runs.
// A cron job or a script that calls the tool pays this on every call; the target is within 30 ms of bare node.
// `all --dry-run` stands for a command up to its first request: it loads everything an import loads (HTTP, decoding,
// sinks, state) and prints the requests it would send, sending none.
import { spawnSync } from 'node:child_process';
import { BIN, utcDay } from './lib.mjs';

const RUNS = 15;

/** @param {readonly string[]} args */
function wallMs(args) {
  const started = performance.now();
  const child = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (child.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${child.status}`);
  return performance.now() - started;
}

const median = (/** @type {readonly number[]} */ values) =>
  /** @type {number} */ ([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);

/**
 * Median wall time of each command line, the runs interleaved so that load on the machine falls on all alike.
 * @returns {{ runs: number, bare: number, version: number, help: number, importHelp: number, firstRequest: number }}
 */
export function startupBenchmark() {
  const cases = {
    bare: ['-e', '0'],
    version: [BIN, '--version'],
    help: [BIN, '--help'],
    importHelp: [BIN, 'traffic', '--help'],
    firstRequest: [BIN, 'all', '--dry-run', '--base-url', 'http://127.0.0.1:9', '--from', utcDay(-2), '--to', utcDay(-2), '-o', '-'],
  };
  /** @type {Record<string, number[]>} */
  const samples = Object.fromEntries(Object.keys(cases).map((key) => [key, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const [key, args] of Object.entries(cases)) samples[key]?.push(wallMs(args));
  }
  const of = (/** @type {keyof typeof cases} */ key) => median(samples[key] ?? []);
  return {
    runs: RUNS,
    bare: of('bare'),
    version: of('version'),
    help: of('help'),
    importHelp: of('importHelp'),
    firstRequest: of('firstRequest'),
  };
}
