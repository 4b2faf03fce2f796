// Helpers shared by the benchmarks: child processes, peak RSS through /usr/bin/time -v, medians, tables.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = new URL('..', import.meta.url).pathname;
export const BIN = join(ROOT, 'bin', 'area-metrics.js');
export const TIME = '/usr/bin/time';

/** Which external tools are here; a missing one is reported, not a crash. */
export function toolStatus() {
  /** @param {string} command */
  const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
  return { time: existsSync(TIME), curl: has('curl'), jq: has('jq') };
}

/** @param {string} prefix */
export async function tempDir(prefix) {
  return mkdtemp(join(tmpdir(), `area-metrics-bench-${prefix}-`));
}

/**
 * Starts `area-metrics sandbox` in its own process (so its CPU is not the client's) and resolves with its base URL
 * from the first stdout line, `sandbox listening on http://...`.
 * @param {readonly string[]} args
 * @param {readonly string[]} [nodeFlags] flags of the sandbox's node, e.g. `--max-old-space-size=64`
 * @returns {Promise<{ url: string, child: import('node:child_process').ChildProcess, stop: () => Promise<void> }>}
 */
export function startSandboxProcess(args, nodeFlags = []) {
  const child = spawn(process.execPath, [...nodeFlags, BIN, 'sandbox', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => fail(new Error('sandbox did not start within 30 s')), 30_000);
    /** @param {Error} error */
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGTERM');
      reject(new Error(`${error.message}\n${stderr}`));
    };
    child.once('exit', (code) => fail(new Error(`sandbox exited with ${code} before listening`)));
    lines.once('line', (line) => {
      const match = /^sandbox listening on (http:\/\/\S+)$/.exec(line);
      if (!match) return fail(new Error(`unexpected first sandbox line: ${line}`));
      clearTimeout(timer);
      child.removeAllListeners('exit');
      lines.on('line', () => {}); // keep draining the banner
      resolve({ url: /** @type {string} */ (match[1]), child, stop: () => stopChild(child) });
    });
  });
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<void>}
 */
export function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Runs a command to completion under /usr/bin/time -v (when installed) and returns wall time, peak RSS (of the
 * largest process in the tree, as getrusage reports it), exit code and the captured output.
 * @param {string} command
 * @param {readonly string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, cwd?: string, useTime?: boolean }} [options]
 * @returns {Promise<{ code: number | null, wallMs: number, maxRssKb: number | undefined, cpuSeconds: number | undefined, stdout: string, stderr: string }>}
 */
export async function measure(command, args, { env = process.env, cwd = ROOT, useTime = true } = {}) {
  const reportDir = useTime ? await tempDir('time') : undefined;
  const report = reportDir ? join(reportDir, 'time.txt') : undefined;
  const [file, argv] = report ? [TIME, ['-v', '-o', report, command, ...args]] : [command, args];
  const started = performance.now();
  const child = spawn(file, argv, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  /** @type {number | null} */
  const code = await new Promise((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  const wallMs = performance.now() - started;
  let maxRssKb;
  let cpuSeconds;
  if (report && reportDir) {
    const text = await readFile(report, 'utf8').catch(() => '');
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(text);
    maxRssKb = rss ? Number(rss[1]) : undefined;
    const user = /User time \(seconds\): ([\d.]+)/.exec(text);
    const system = /System time \(seconds\): ([\d.]+)/.exec(text);
    cpuSeconds = user && system ? Number(user[1]) + Number(system[1]) : undefined;
    await rm(reportDir, { recursive: true, force: true });
  }
  return { code, wallMs, maxRssKb, cpuSeconds, stdout, stderr };
}

/**
 * @param {readonly (number | undefined)[]} values
 * @returns {number | undefined}
 */
export function median(values) {
  const sorted = values
    .filter((value) => value !== undefined && !Number.isNaN(value))
    .map(Number)
    .sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  const at = (/** @type {number} */ index) => /** @type {number} */ (sorted[index]);
  return sorted.length % 2 ? at(middle) : (at(middle - 1) + at(middle)) / 2;
}

/**
 * UTC day `offset` days from today, as YYYY-MM-DD.
 * @param {number} offsetDays
 */
export function utcDay(offsetDays) {
  const today = new Date();
  const start = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return new Date(start + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/**
 * @param {readonly string[]} header
 * @param {readonly (readonly unknown[])[]} rows
 */
export function formatTable(header, rows) {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => String(row[column] ?? '').length)));
  /** @param {readonly unknown[]} cells */
  const line = (cells) => `| ${cells.map((cell, column) => String(cell ?? '').padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export const mb = (/** @type {number | undefined} */ kb) => (kb === undefined ? 'n/a' : (kb / 1024).toFixed(0));
export const seconds = (/** @type {number | undefined} */ ms) => (ms === undefined ? 'n/a' : (ms / 1000).toFixed(2));

/**
 * @typedef {{ baseUrl: string, from: string, to: string }} ImportWindow
 * @typedef {Awaited<ReturnType<typeof measure>> & { units: number, rows: number, unchanged: number, serverCpuSeconds?: number }} ImportRun
 */

const SUMMARY = /imported (\d+) of (\d+) units, (\d+) rows(?:, (\d+) unchanged)?/;

/**
 * The built binary's `all` import of the window into `output` (a folder, a bucket, a database), measured; throws
 * unless every unit was imported.
 * @param {ImportWindow} window
 * @param {string} output
 * @param {Record<string, string>} extraEnv
 * @returns {Promise<ImportRun>}
 */
export async function importInto(window, output, extraEnv) {
  const args = [BIN, 'all', '--base-url', window.baseUrl, '--from', window.from, '--to', window.to, '-o', output];
  const env = { ...process.env, AREA_METRICS_CLIENT_ID: 'demo-client', AREA_METRICS_CLIENT_SECRET: 'demo-secret', ...extraEnv };
  const run = await measure(process.execPath, args, { env });
  const summary = SUMMARY.exec(run.stderr);
  if (run.code !== 0 || !summary || summary[1] !== summary[2])
    throw new Error(`import into ${output} failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
  return { ...run, units: Number(summary[2]), rows: Number(summary[3]), unchanged: Number(summary[4] ?? 0) };
}

/**
 * Medians of runs' wall time, CPU and peak memory; the rows and unchanged units of the first.
 * @param {readonly ImportRun[]} runs
 */
export function summarizeRuns(runs) {
  return {
    wallMs: median(runs.map((run) => run.wallMs)),
    cpuSeconds: median(runs.map((run) => run.cpuSeconds)),
    maxRssKb: median(runs.map((run) => run.maxRssKb)),
    /** A server's CPU for the run, where it was measured (a database's). */
    serverCpuSeconds: median(runs.map((run) => run.serverCpuSeconds)),
    rows: runs[0]?.rows,
    unchanged: runs[0]?.unchanged,
  };
}

/**
 * The same `all` import into a fresh folder and into a destination, interleaved round by round, then the re-run into
 * the destination, where every unit must be found unchanged (nothing written again).
 * With `serverCpu` (the destination's server's CPU seconds so far), each run into the destination records its server's.
 * @param {{ rounds: number, log: (line: string) => void, window: ImportWindow, name: string,
 *   place: (round: number) => string, env: Record<string, string>, serverCpu?: () => number }} options
 */
export async function againstFolder({ rounds, log, window, name, place, env, serverCpu }) {
  const into = async (/** @type {string} */ output) => {
    const before = serverCpu?.();
    const run = await importInto(window, output, env);
    return before === undefined || serverCpu === undefined ? run : { ...run, serverCpuSeconds: serverCpu() - before };
  };
  /** @type {{ folder: ImportRun[], destination: ImportRun[], rerun: ImportRun[] }} */
  const samples = { folder: [], destination: [], rerun: [] };
  for (let round = 1; round <= rounds; round++) {
    const folder = await tempDir(`${name}-folder`);
    try {
      samples.folder.push(await importInto(window, folder, {}));
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
    samples.destination.push(await into(place(round)));
    const rerun = await into(place(round));
    if (rerun.unchanged !== rerun.units)
      throw new Error(`the re-run into ${place(round)} rewrote ${rerun.units - rerun.unchanged} of ${rerun.units} units`);
    samples.rerun.push(rerun);
    const wall = (/** @type {ImportRun[]} */ runs) => ((runs.at(-1)?.wallMs ?? Number.NaN) / 1000).toFixed(2);
    log(
      `round ${round}/${rounds}: folder ${wall(samples.folder)} s, ${name} ${wall(samples.destination)} s, ${name} re-run ${wall(samples.rerun)} s`,
    );
  }
  return {
    folder: summarizeRuns(samples.folder),
    destination: summarizeRuns(samples.destination),
    rerun: summarizeRuns(samples.rerun),
    /** The destination's time over the folder's, round by round. */
    byRound: samples.destination.map((run, index) => run.wallMs / (samples.folder[index]?.wallMs ?? Number.NaN)),
  };
}
