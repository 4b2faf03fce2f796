#!/usr/bin/env node
// Where the 7-day import's time goes, stage by stage, against the download alone (bench/floor.mjs). Interleaved
// rounds (the order reversed every round, after one round not counted) of: the floor, the import, and the import
// under `node --cpu-prof` with bench/fs-waits.mjs preloaded. The profile's samples are main-thread time: each is given
// to a stage by the nearest frame of the importer's own code on its stack (dist/<file>, a few files split by
// function; a memo's frames are its caller's), so JSON.parse counts for the decoding that calls it and undici's code for the fetch; samples with no
// frame of ours are the collector, module loading, node's internals or idle. The file-system waits (fsync, writes,
// done on libuv's threads while the main thread idles) come from the preload, as wall time.
// Usage: node bench/breakdown.mjs [--rounds 3], or `node bench/run.mjs --breakdown` (alone) / within `npm run bench`.
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BIN, ROOT, formatTable, measure, median, startSandboxProcess, tempDir, utcDay } from './lib.mjs';

const CREDENTIALS = { AREA_METRICS_CLIENT_ID: 'demo-client', AREA_METRICS_CLIENT_SECRET: 'demo-secret' };

/** The stages, in the order of a unit's life. */
export const STAGES = [
  'fetch (HTTP, paging, pacer)',
  'decode (UTF-8, JSON.parse, envelope)',
  'validate (contract, request, repeats)',
  'encode (CSV rows)',
  'assemble and sort a unit',
  'hash (SHA-256)',
  'compare with what is there',
  'write and fsync (main-thread part)',
  'judge (store figures, the rule)',
  'state and manifest',
  'orchestration, CLI, log',
  'start-up: module loading',
  'garbage collector',
  'node internals (event loop, streams, timers)',
];

/**
 * Which stage a frame of dist/ belongs to: by `file#function` first, then by file, then by folder.
 * @type {readonly [string, number][]}
 */
const DIST_STAGES = [
  ['metrics/page.js#parseEnvelope', 1],
  ['metrics/byte-writer.js', 3],
  ['metrics/page.js', 1],
  ['metrics/descriptors.js#compareResults', 4],
  ['metrics/descriptors.js#screenSeconds', 3],
  ['metrics/descriptors.js#integerText', 3],
  ['metrics/descriptors.js#addTrafficShare', 8],
  ['metrics/descriptors.js', 2],
  ['metrics/check.js', 2],
  ['metrics/schema.js', 2],
  ['metrics/date-time.js', 2],
  ['metrics/unit-bounds.js', 2],
  ['metrics/encode.js', 3],
  ['output/format.js', 3],
  ['output/parquet.js', 3],
  ['metrics/unit.js', 4],
  ['metrics/store-sums.js', 8],
  ['metrics/measure.js', 8],
  ['output/content-hash.js', 5],
  ['output/atomic-file.js#holdsBytes', 6],
  ['output/atomic-file.js', 7],
  ['output/sinks.js', 7],
  ['output/layout.js', 7],
  ['destination/', 7],
  ['state/judgement/', 8],
  ['state/', 9],
  ['output/run-manifest.js', 9],
  ['import/records.js', 9],
  ['import/day-completion.js', 9],
  ['import/settlement.js', 9],
  ['import/finality.js', 9],
  ['fetch/', 0],
];

/**
 * The stage of a profile node: the nearest frame of dist/ on its stack decides; failing one, what the stack is.
 * @param {{ callFrame: { url: string, functionName: string }, parent?: any }} node
 * @returns {string}
 */
function stageOf(node) {
  const top = node.callFrame;
  if (top.functionName === '(idle)') return 'idle';
  if (top.functionName === '(garbage collector)') return STAGES[12] ?? '';
  // Loading a module (ours or a package's, at start or when first needed) is loading, whoever asked for it.
  for (let frame = node; frame; frame = frame.parent) {
    if (frame.callFrame.url.startsWith('node:internal/modules/')) return STAGES[11] ?? '';
  }
  let undici = false;
  for (let frame = node; frame; frame = frame.parent) {
    const { url, functionName } = frame.callFrame;
    const at = url.indexOf('/dist/');
    if (at >= 0 && url.startsWith(`file://${ROOT}`)) {
      const path = url.slice(at + '/dist/'.length);
      // A memo's cost is its caller's, and so is a package's bundled into dist/vendor/ (zod).
      if (path === 'memo.js' || path.startsWith('vendor/')) continue;
      const match = DIST_STAGES.find(([prefix]) => {
        const [file, fn] = prefix.split('#');
        return fn === undefined ? path.startsWith(file ?? '') : path === file && functionName === fn;
      });
      return STAGES[match ? match[1] : 10] ?? '';
    }
    if (url.includes('undici')) undici = true;
  }
  if (undici) return STAGES[0] ?? '';
  return STAGES[13] ?? '';
}

/**
 * Main-thread milliseconds per stage in one `.cpuprofile`, and the three functions that cost each stage most.
 * @param {{ nodes: any[], samples: number[], timeDeltas: number[] }} profile
 */
export function attribute(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) byId.get(child).parent = node;
  /** @type {Map<string, number>} */
  const stages = new Map();
  /** @type {Map<string, Map<string, number>>} */
  const functions = new Map();
  for (const [index, id] of profile.samples.entries()) {
    const node = byId.get(id);
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    const stage = stageOf(node);
    stages.set(stage, (stages.get(stage) ?? 0) + ms);
    const name = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/.*\/(dist|node_modules)\//, '')}`;
    const named = functions.get(stage) ?? new Map();
    functions.set(stage, named.set(name, (named.get(name) ?? 0) + ms));
  }
  return { stages, functions };
}

/**
 * The breakdown, interleaved with the floor and the import unprofiled.
 * @param {{ rounds: number, log: (line: string) => void }} options
 */
export async function breakdownBenchmark({ rounds, log }) {
  const load = [loadavg()[0]];
  const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '30']);
  const window = ['--base-url', sandbox.url, '--from', utcDay(-8), '--to', utcDay(-2)];
  const env = { ...process.env, ...CREDENTIALS };
  const work = await tempDir('breakdown');
  /** @type {Record<string, { wallMs: number, cpuSeconds: number | undefined }[]>} */
  const runs = { floor: [], import: [], profiled: [] };
  /** @type {Map<string, number[]>} */
  const stageRuns = new Map();
  /** @type {Map<string, Map<string, number>>} */
  const functionTotals = new Map();
  /** @type {Map<string, number[]>} */
  const waitRuns = new Map();
  /** @type {Record<string, () => Promise<{ wallMs: number, cpuSeconds: number | undefined }>>} */
  const variants = {
    floor: async () => {
      const run = await measure(process.execPath, [join(ROOT, 'bench', 'floor.mjs'), ...window], { env });
      if (run.code !== 0) throw new Error(`floor failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
      return run;
    },
    import: async () => importOnce([]),
    profiled: async () => {
      const profiles = join(work, 'profiles');
      await rm(profiles, { recursive: true, force: true });
      await mkdir(profiles);
      const waitsFile = join(work, 'fs-waits.json');
      const run = await importOnce(['--cpu-prof', `--cpu-prof-dir=${profiles}`, '--import', join(ROOT, 'bench', 'fs-waits.mjs')], {
        BENCH_FS_WAITS: waitsFile,
      });
      const [name] = await readdir(profiles);
      const { stages, functions } = attribute(JSON.parse(await readFile(join(profiles, name ?? ''), 'utf8')));
      for (const [stage, ms] of stages) stageRuns.set(stage, [...(stageRuns.get(stage) ?? []), ms]);
      for (const [stage, named] of functions) {
        const totals = functionTotals.get(stage) ?? new Map();
        for (const [fn, ms] of named) totals.set(fn, (totals.get(fn) ?? 0) + ms);
        functionTotals.set(stage, totals);
      }
      const waits = JSON.parse(await readFile(waitsFile, 'utf8'));
      for (const [kind, { wallMs }] of Object.entries(waits)) waitRuns.set(kind, [...(waitRuns.get(kind) ?? []), wallMs]);
      return run;
    },
  };
  /** @param {string[]} nodeFlags @param {Record<string, string>} [extraEnv] */
  async function importOnce(nodeFlags, extraEnv = {}) {
    const out = join(work, 'out');
    await rm(out, { recursive: true, force: true });
    const args = [...nodeFlags, BIN, 'all', ...window, '--format', 'csv', '-o', out];
    const run = await measure(process.execPath, args, { env: { ...env, ...extraEnv } });
    if (run.code !== 0) throw new Error(`import failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
    return run;
  }
  try {
    for (let round = 0; round <= rounds; round++) {
      const order = round % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
      for (const key of order) {
        // Round 0 warms the sandbox's pages and the disk; its stage samples are dropped below.
        const run = await /** @type {() => Promise<{ wallMs: number, cpuSeconds: number | undefined }>} */ (variants[key])();
        if (round > 0) runs[key]?.push(run);
      }
      if (round === 0) {
        stageRuns.clear();
        functionTotals.clear();
        waitRuns.clear();
      }
      log(`breakdown: round ${round}${round === 0 ? ' (warm-up)' : ''} done`);
    }
  } finally {
    await sandbox.stop();
    await rm(work, { recursive: true, force: true });
  }
  load.push(loadavg()[0]);
  const med = (/** @type {string} */ key, /** @type {'wallMs' | 'cpuSeconds'} */ what) =>
    median((runs[key] ?? []).map((run) => (what === 'wallMs' ? run.wallMs : (run.cpuSeconds ?? Number.NaN) * 1000)));
  /** Per round, the import's figure over the floor's in the same round. */
  const ratios = (/** @type {'wallMs' | 'cpuSeconds'} */ what) =>
    (runs.import ?? []).map((run, index) => {
      const floor = runs.floor?.[index];
      return what === 'wallMs'
        ? run.wallMs / (floor?.wallMs ?? Number.NaN)
        : (run.cpuSeconds ?? Number.NaN) / (floor?.cpuSeconds ?? Number.NaN);
    });
  const stages = [...STAGES, 'idle'].map((stage) => {
    const top = [...(functionTotals.get(stage) ?? new Map())]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([fn, ms]) => `${fn} ${Math.round(ms / rounds)}`);
    return { stage, ms: median(stageRuns.get(stage) ?? []) ?? 0, top };
  });
  const waits = Object.fromEntries([...waitRuns].map(([kind, values]) => [kind, median(values) ?? 0]));
  return {
    rounds,
    loadAverage: load.map((value) => value?.toFixed(2)),
    floor: { wallMs: med('floor', 'wallMs'), cpuMs: med('floor', 'cpuSeconds') },
    import: { wallMs: med('import', 'wallMs'), cpuMs: med('import', 'cpuSeconds') },
    profiled: { wallMs: med('profiled', 'wallMs'), cpuMs: med('profiled', 'cpuSeconds') },
    wallRatios: ratios('wallMs'),
    cpuRatios: ratios('cpuSeconds'),
    stages,
    waits,
  };
}

/**
 * The breakdown as printed lines: the whole against the floor, then each stage's main-thread time.
 * @param {Awaited<ReturnType<typeof breakdownBenchmark>>} result
 */
export function breakdownLines(result) {
  const ms = (/** @type {number | undefined} */ value) => (value === undefined ? 'n/a' : value.toFixed(0));
  const x = (/** @type {number | undefined} */ value) => (value === undefined || Number.isNaN(value) ? 'n/a' : `${value.toFixed(2)}x`);
  const floorCpu = result.floor.cpuMs;
  const busy = result.stages.filter(({ stage }) => stage !== 'idle').reduce((sum, { ms: value }) => sum + value, 0);
  const lines = [
    `Breakdown of the 7-day CSV import (median of ${result.rounds} interleaved rounds; load average ${result.loadAverage.join(' -> ')})`,
    `import: wall ${ms(result.import.wallMs)} ms, CPU ${ms(result.import.cpuMs)} ms; download alone (floor): wall ${ms(result.floor.wallMs)} ms, CPU ${ms(floorCpu)} ms`,
    `import / download alone, round by round: wall ${result.wallRatios.map(x).join(', ')} (median ${x(median(result.wallRatios))}); CPU ${result.cpuRatios.map(x).join(', ')} (median ${x(median(result.cpuRatios))})`,
    `profiled import (--cpu-prof, fs waits timed): wall ${ms(result.profiled.wallMs)} ms, CPU ${ms(result.profiled.cpuMs)} ms; main thread busy ${ms(busy)} ms (the sum of the stages below)`,
  ];
  const rows = result.stages.map(({ stage, ms: value, top }) => [
    stage,
    ms(value),
    stage === 'idle' ? '' : `${((100 * value) / busy).toFixed(1)}%`,
    floorCpu === undefined ? 'n/a' : x(value / floorCpu),
    top.join('; '),
  ]);
  lines.push(
    formatTable(['stage', 'main-thread ms', 'share of busy', 'vs floor CPU', 'top functions (self ms, mean of the rounds)'], rows),
  );
  const waits = Object.entries(result.waits)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, value]) => `${kind} ${ms(value)}`);
  lines.push(`file-system waits, wall ms while one is pending (libuv threads, main thread free meanwhile): ${waits.join(', ')}`);
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
  const result = await breakdownBenchmark({ rounds: Number(values.rounds), log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`${breakdownLines(result).join('\n')}\n`);
}
