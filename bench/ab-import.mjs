#!/usr/bin/env node
// Two or more builds of the importer side by side, against one sandbox process: `node bench/ab-import.mjs
// before=/path/to/checkout after=/path/to/other [--pairs 5] [--days 7] [--output dir,stdout] [--callgrind]`. Each
// checkout must be built (`npm run build` there). One sandbox (this checkout's) serves all of them, so they import the
// same data; the builds run in turn, the order reversed every round, after one round that is not counted. Prints
// each run's CPU (user + system) and wall time, the medians, and for every two builds the ratios pair by pair.
// `--output stdout` imports with `-o -` (NDJSON, no state); `--callgrind` counts each run's instructions under
// valgrind instead (slow: about a minute a run; deterministic to a few percent, where times on a shared machine are not).
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { measure, median, startSandboxProcess, tempDir, utcDay } from './lib.mjs';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pairs: { type: 'string', default: '5' },
    days: { type: 'string', default: '7' },
    output: { type: 'string', default: 'dir' },
    callgrind: { type: 'boolean', default: false },
  },
});
const builds = positionals.map((argument) => {
  const [name, root] = argument.split('=');
  if (!name || !root) throw new Error(`a build is name=/path/to/checkout, not ${argument}`);
  return { name, bin: join(root, 'bin', 'area-metrics.js') };
});
if (builds.length < 2) throw new Error('name two builds or more: before=/path/to/checkout after=/path/to/other');
const outputs = (flags.output ?? 'dir').split(',');
const CREDENTIALS = { AREA_METRICS_CLIENT_ID: 'demo-client', AREA_METRICS_CLIENT_SECRET: 'demo-secret' };

/** @typedef {{ cpu: number, wall: number, instructions: number | undefined }} Run */

/**
 * One import by one build; `-o -` writes NDJSON (CSV on stdout takes one metric).
 * @param {string} bin @param {string} baseUrl @param {string} output
 * @returns {Promise<Run>}
 */
async function importOnce(bin, baseUrl, output) {
  const out = output === 'stdout' ? '-' : await tempDir('ab');
  const format = output === 'stdout' ? 'ndjson' : 'csv';
  const window = ['--from', utcDay(-1 - Number(flags.days)), '--to', utcDay(-2)];
  const args = [bin, 'all', '--base-url', baseUrl, ...window, '--format', format, '-o', out];
  const profile = join(tmpdir(), `area-metrics-ab-${process.pid}.callgrind`);
  const [command, argv] = flags.callgrind
    ? ['valgrind', ['--tool=callgrind', `--callgrind-out-file=${profile}`, process.execPath, ...args]]
    : [process.execPath, args];
  const run = await measure(command, argv, { env: { ...process.env, ...CREDENTIALS } });
  if (out !== '-') await rm(out, { recursive: true, force: true });
  if (flags.callgrind) await rm(profile, { force: true });
  if (run.code !== 0) throw new Error(`${bin} failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
  const collected = /Collected : (\d+)/.exec(run.stderr);
  return { cpu: run.cpuSeconds ?? Number.NaN, wall: run.wallMs / 1000, instructions: collected ? Number(collected[1]) : undefined };
}

const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '30']);
/** @type {Map<string, Run[]>} */
const runs = new Map();
try {
  for (let round = -1; round < Number(flags.pairs); round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const output of outputs) {
      for (const build of order) {
        const run = await importOnce(build.bin, sandbox.url, output);
        if (round < 0) continue;
        const key = `${build.name} ${output}`;
        runs.set(key, [...(runs.get(key) ?? []), run]);
        const instructions = run.instructions === undefined ? '' : ` ${(run.instructions / 1e9).toFixed(3)} G instructions`;
        console.log(`round ${round + 1} ${key}: CPU ${run.cpu.toFixed(2)} s, wall ${run.wall.toFixed(2)} s${instructions}`);
      }
    }
  }
} finally {
  await sandbox.stop();
}

/** @param {readonly (number | undefined)[]} values */
const shown = (values) => values.map((value) => (value === undefined ? 'n/a' : value.toFixed(3))).join(', ');
for (const [key, measured] of runs) {
  console.log(
    `${key}: median CPU ${median(measured.map(({ cpu }) => cpu))?.toFixed(2)} s, wall ${median(measured.map(({ wall }) => wall))?.toFixed(2)} s`,
  );
}
for (const output of outputs) {
  for (const [index, first] of builds.entries()) {
    for (const second of builds.slice(index + 1)) {
      const a = runs.get(`${first.name} ${output}`) ?? [];
      const b = runs.get(`${second.name} ${output}`) ?? [];
      /** @param {(run: Run) => number | undefined} pick */
      const ratios = (pick) =>
        b.map((run, pair) => {
          const [after, before] = [pick(run), a[pair] === undefined ? undefined : pick(a[pair])];
          return after === undefined || before === undefined ? undefined : after / before;
        });
      const line = (/** @type {string} */ what, /** @type {(run: Run) => number | undefined} */ pick) =>
        `${what} ${shown(ratios(pick))} (median ${median(ratios(pick))?.toFixed(3) ?? 'n/a'})`;
      const parts = [line('CPU', ({ cpu }) => cpu), line('wall', ({ wall }) => wall)];
      if (flags.callgrind) parts.push(line('instructions', ({ instructions }) => instructions));
      console.log(`${output}, ${second.name} / ${first.name}, pair by pair: ${parts.join('; ')}`);
    }
  }
}
