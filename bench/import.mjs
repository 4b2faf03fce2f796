// Import benchmark: the importer (CSV, NDJSON, Parquet) side by side with the lean reference, the physical floor and curl+jq,
// interleaved, median of N rounds; then peak RSS for 30 days and for one big day.
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, ROOT, mb, measure, median, startSandboxProcess, tempDir, utcDay } from './lib.mjs';

const CREDENTIALS = { AREA_METRICS_CLIENT_ID: 'demo-client', AREA_METRICS_CLIENT_SECRET: 'demo-secret' };
const SUMMARY = /imported (\d+) of (\d+) units, (\d+) rows/;

/**
 * What a variant is run against, and what a run gives: `measure`'s figures with the rows written (or requests made).
 * @typedef {{ baseUrl: string, from: string, to: string, out: string, pageSize?: number }} RunTarget
 * @typedef {Awaited<ReturnType<typeof measure>> & { rows?: number, requests?: number }} VariantRun
 * @typedef {(target: RunTarget) => Promise<VariantRun>} Variant
 * @typedef {(line: string) => void} Log
 */

/**
 * @param {string} format
 * @param {readonly string[]} [extraArgs]
 * @returns {(target: RunTarget) => Promise<VariantRun & { rows: number }>}
 */
function importerRun(format, extraArgs = []) {
  return async ({ baseUrl, from, to, out, pageSize }) => {
    const args = [BIN, 'all', '--base-url', baseUrl, '--from', from, '--to', to, '--format', format, '-o', out, ...extraArgs];
    if (pageSize) args.push('--page-size', String(pageSize));
    const run = await measure(process.execPath, args, { env: { ...process.env, ...CREDENTIALS } });
    const summary = SUMMARY.exec(run.stderr);
    if (run.code !== 0 || !summary || summary[1] !== summary[2]) {
      throw new Error(`importer (${format}) failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
    }
    return { ...run, rows: Number(summary[3]) };
  };
}

/**
 * @param {readonly string[]} [extraArgs]
 * @returns {Variant}
 */
const leanRunWith =
  (extraArgs = []) =>
  async ({ baseUrl, from, to, out }) => {
    const args = [join(ROOT, 'bench', 'lean.mjs'), '--base-url', baseUrl, '--from', from, '--to', to, '--out', out, ...extraArgs];
    const run = await measure(process.execPath, args, { env: { ...process.env, ...CREDENTIALS } });
    if (run.code !== 0) throw new Error(`lean reference failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
    return { ...run, rows: JSON.parse(run.stdout).rows };
  };
const leanRun = leanRunWith();

/** @param {Omit<RunTarget, 'out'>} target @returns {Promise<VariantRun>} */
async function floorRun({ baseUrl, from, to }) {
  const args = [join(ROOT, 'bench', 'floor.mjs'), '--base-url', baseUrl, '--from', from, '--to', to];
  const run = await measure(process.execPath, args, { env: { ...process.env, ...CREDENTIALS } });
  if (run.code !== 0) throw new Error(`floor client failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
  return { ...run, requests: JSON.parse(run.stdout).requests };
}

/** @param {string} folder */
async function csvFiles(folder) {
  /** @type {Map<string, Buffer>} */
  const files = new Map();
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.csv')) {
      const path = join(entry.parentPath ?? entry.path, entry.name);
      files.set(path.slice(folder.length), await readFile(path));
    }
  }
  return files;
}

/** The importer's and the lean reference's CSV files must be byte-identical, or the two did not do the same work. */
/**
 * @param {{ csv?: string, lean?: string }} outputs
 * @param {Log} log
 */
async function compareOutputs({ csv, lean }, log) {
  if (!csv || !lean) return;
  const [ours, theirs] = await Promise.all([csvFiles(csv), csvFiles(lean)]);
  const names = [...new Set([...ours.keys(), ...theirs.keys()])];
  const different = names.filter((name) => !ours.get(name)?.equals(theirs.get(name) ?? Buffer.alloc(0)));
  if (different.length > 0) throw new Error(`the importer and the lean reference wrote different files: ${different.join(', ')}`);
  log(`importer and lean reference wrote the same ${names.length} CSV files, byte for byte`);
}

/** Bytes of the data files an import wrote (the state file aside). */
/** @param {string} folder */
async function bytesOnDisk(folder) {
  let bytes = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && !entry.name.startsWith('.')) bytes += (await stat(join(entry.parentPath ?? entry.path, entry.name))).size;
  }
  return bytes;
}

/**
 * What the run manifest adds to a run at most: one SHA-256 pass over every data file's bytes (the importer hashes
 * them as they pass, already in memory; this reads them from disk too, so it is an upper bound).
 * @param {string} folder
 */
async function hashCost(folder) {
  /** @type {Buffer[]} */
  const bodies = [];
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    const parent = entry.parentPath ?? entry.path;
    if (entry.isFile() && !entry.name.startsWith('.') && !parent.includes('_runs')) bodies.push(await readFile(join(parent, entry.name)));
  }
  const started = performance.now();
  for (const body of bodies) createHash('sha256').update(body).digest('hex');
  return { ms: performance.now() - started, bytes: bodies.reduce((sum, body) => sum + body.length, 0), files: bodies.length };
}

/** @param {string} folder */
async function countLines(folder) {
  let lines = 0;
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ndjson')) continue;
    const text = await readFile(join(entry.parentPath ?? entry.path, entry.name), 'utf8');
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines++;
  }
  return lines;
}

/** @type {Variant} */
async function curlJqRun({ baseUrl, from, to, out }) {
  const run = await measure('bash', [join(ROOT, 'bench', 'curl-jq.sh'), baseUrl, from, to, out], {
    env: { ...process.env, ...CREDENTIALS },
  });
  if (run.code !== 0) throw new Error(`curl+jq baseline failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
  return { ...run, rows: await countLines(out) };
}

/**
 * The side-by-side part: every round runs each variant once, in the same order (A, B, C, D, A, B, ...), so that a
 * slow phase of the machine hits all of them alike.
 */
/** @param {{ rounds: number, tools: { curl: boolean, jq: boolean }, log: Log, only?: readonly string[] }} options */
export async function importComparison({ rounds, tools, log, only }) {
  const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '30']);
  // Windows end the day before yesterday: the sandbox serves a store's local day once it has ended, and yesterday's
  // window still holds running days, so its rows would change while the benchmark runs.
  const window = { baseUrl: sandbox.url, from: utcDay(-8), to: utcDay(-2) };
  /** @type {{ name: string, key: string, run: Variant }[]} */
  const variants = [
    { name: 'area-metrics all --format csv', key: 'csv', run: importerRun('csv') },
    // The same CSV files named metric=<metric>/dt=<day>/...: the layout must cost nothing over the flat one.
    { name: 'area-metrics all --format csv --layout hive', key: 'hive', run: importerRun('csv', ['--layout', 'hive']) },
    // The same 7 days as store-local days: each window is 26 h, so about 8% more data is fetched (the neighbouring
    // local days are received and left out).
    { name: 'area-metrics all --format csv --days local', key: 'local', run: importerRun('csv', ['--days', 'local']) },
    { name: 'area-metrics all --format ndjson', key: 'ndjson', run: importerRun('ndjson') },
    { name: 'area-metrics all --format parquet', key: 'parquet', run: importerRun('parquet') },
    // The measuring stick: a lean hand-written importer doing the same job without most of the guarantees (bench/lean.mjs).
    { name: 'lean reference (bench/lean.mjs), CSV', key: 'lean', run: leanRun },
    // The anchor a user would write by hand: the same, on Node's global fetch as it comes (no proxy-aware dispatcher).
    { name: 'lean anchor (bench/lean.mjs --plain-fetch), CSV', key: 'anchor', run: leanRunWith(['--plain-fetch']) },
    { name: 'floor: bare fetch, bodies discarded', key: 'floor', run: floorRun },
  ];
  if (tools.curl && tools.jq) variants.push({ name: 'baseline: curl + jq (xargs -P 4)', key: 'curljq', run: curlJqRun });
  else log('curl or jq is missing (apt-get install -y curl jq): the curl+jq baseline is skipped');
  // `--variants csv,hive`: only those (the CSV import is always among them: the others are held to its rows).
  if (only) variants.splice(0, variants.length, ...variants.filter((variant) => variant.key === 'csv' || only.includes(variant.key)));
  /** @type {Record<string, VariantRun[]>} */
  const samples = Object.fromEntries(variants.map((variant) => [variant.key, []]));
  // The first round's CSV files of the importer and of the lean reference, compared byte for byte: the same work.
  /** @type {{ csv?: string, lean?: string }} */
  const firstOutputs = {};
  // Bytes on disk of each format's first round.
  /** @type {Record<string, number>} */
  const diskBytes = {};
  /** @type {Awaited<ReturnType<typeof hashCost>> | undefined} */
  let manifestHash;
  try {
    // One unmeasured warm-up: the sandbox builds its query cache and the page cache holds the node binary.
    log(`warm-up: ${window.from}..${window.to} against ${sandbox.url}`);
    await floorRun(window);
    if (variants.some((variant) => variant.key === 'local')) {
      // The local-mode windows are other queries: warmed the same way, so the sandbox's cache favours neither mode.
      const warmLocal = await tempDir('warm-local');
      await importerRun('csv', ['--days', 'local'])({ ...window, out: warmLocal });
      await rm(warmLocal, { recursive: true, force: true });
    }
    for (let round = 1; round <= rounds; round++) {
      for (const variant of variants) {
        const out = await tempDir(variant.key);
        try {
          const result = await variant.run({ ...window, out });
          samples[variant.key]?.push(result);
          log(
            `round ${round}/${rounds} ${variant.name}: ${(result.wallMs / 1000).toFixed(2)} s, ` +
              `peak RSS ${result.maxRssKb === undefined ? 'n/a' : `${(result.maxRssKb / 1024).toFixed(0)} MB`}` +
              (result.rows !== undefined ? `, ${result.rows} rows` : ''),
          );
          if (round === 1 && ['csv', 'hive', 'ndjson', 'parquet'].includes(variant.key)) {
            const bytes = await bytesOnDisk(out);
            diskBytes[variant.key] = bytes;
            log(`${variant.name}: ${(bytes / 2 ** 20).toFixed(1)} MB on disk`);
          }
          if (round === 1 && variant.key === 'hive') {
            manifestHash = await hashCost(out);
            log(
              `run manifest's SHA-256 of ${manifestHash.files} files, ${(manifestHash.bytes / 2 ** 20).toFixed(1)} MB: ${manifestHash.ms.toFixed(0)} ms`,
            );
          }
        } finally {
          if (round === 1 && variant.key === 'csv') firstOutputs.csv = out;
          else if (round === 1 && variant.key === 'lean') firstOutputs.lean = out;
          else await rm(out, { recursive: true, force: true });
        }
      }
      if (round === 1) await compareOutputs(firstOutputs, log);
    }
  } finally {
    await sandbox.stop();
    for (const out of Object.values(firstOutputs)) await rm(out, { recursive: true, force: true });
  }
  const csvRuns = samples.csv ?? [];
  const rows = csvRuns[0]?.rows;
  for (const key of ['hive', 'ndjson', 'parquet', 'lean', 'anchor', 'curljq']) {
    for (const sample of samples[key] ?? []) {
      if (sample.rows !== rows) throw new Error(`${key} produced ${sample.rows} rows, the CSV import ${rows}: not the same work`);
    }
  }
  const summary = variants.map((variant) => {
    const runs = samples[variant.key] ?? [];
    // Each round's ratio to the lean reference's run of the same round: the machine's slow phases hit both alike.
    const leanRuns = samples.lean ?? [];
    /** Each run's time over that of the same round of `reference`. @param {VariantRun[]} reference */
    const byRound = (reference) =>
      runs.map((run, round) => {
        const other = reference[round];
        return other ? Number((run.wallMs / other.wallMs).toFixed(2)) : undefined;
      });
    const vsLeanByRound = byRound(leanRuns);
    // And to the hand-written anchor (the lean reference on Node's global fetch as it comes).
    const vsAnchorByRound = byRound(samples.anchor ?? []);
    // And to the flat CSV import of the same round (the hive layout's measure).
    const vsCsvByRound = byRound(csvRuns);
    return {
      vsLeanByRound,
      vsAnchorByRound,
      vsCsvByRound,
      key: variant.key,
      name: variant.name,
      runs: runs.length,
      wallMs: median(runs.map((run) => run.wallMs)),
      allWallMs: runs.map((run) => Math.round(run.wallMs)),
      cpuSeconds: median(runs.map((run) => run.cpuSeconds)),
      maxRssKb: median(runs.map((run) => run.maxRssKb)),
      // A local-mode import writes its own rows (store-local days); every other variant must write the CSV import's.
      rows: variant.key === 'local' ? runs[0]?.rows : rows,
      diskBytes: diskBytes[variant.key],
    };
  });
  return { window, rows, requests: samples.floor?.[0]?.requests, manifestHash, variants: summary };
}

/** Peak RSS of a 30-day backfill against the same data set, to compare with 7 days (memory must not grow). */
/** @param {{ log: Log }} options */
export async function thirtyDays({ log }) {
  const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '31']);
  const out = await tempDir('30d');
  try {
    const window = { baseUrl: sandbox.url, from: utcDay(-31), to: utcDay(-2), out };
    const result = await importerRun('csv')(window);
    log(`30 days, CSV: ${(result.wallMs / 1000).toFixed(2)} s, ${result.rows} rows, peak RSS ${mb(result.maxRssKb)} MB`);
    return { ...result, window };
  } finally {
    await rm(out, { recursive: true, force: true });
    await sandbox.stop();
  }
}

/** One big day: 20,000 stores x 30 zones, --page-size 10000, in each of `formats` against the same sandbox. */
/** @param {{ log: Log, formats?: readonly string[] }} options */
export async function bigDay({ log, formats = ['csv'] }) {
  const sandbox = await startSandboxProcess(['--stores', '20000', '--zones', '30', '--days', '2']);
  /** @type {Record<string, VariantRun & { day: string, diskBytes: number }>} */
  const runs = {};
  try {
    const day = utcDay(-2);
    for (const format of formats) {
      const out = await tempDir(`bigday-${format}`);
      try {
        const result = await importerRun(format)({ baseUrl: sandbox.url, from: day, to: day, out, pageSize: 10_000 });
        const diskBytes = await bytesOnDisk(out);
        log(
          `big day, ${format}: ${(result.wallMs / 1000).toFixed(2)} s, ${result.rows} rows, peak RSS ${mb(result.maxRssKb)} MB, ` +
            `${(diskBytes / 2 ** 20).toFixed(1)} MB on disk`,
        );
        runs[format] = { ...result, day, diskBytes };
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    }
    return runs;
  } finally {
    await sandbox.stop();
  }
}
