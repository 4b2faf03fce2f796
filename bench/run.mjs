#!/usr/bin/env node
// `npm run bench`: import benchmark (importer vs the lean reference, the floor and curl+jq; 30 days; one big day) and broker
// benchmark (autocannon vs a bare node:http server, cold burst); pacing (a backfill at a vendor's limit of 10/s, and
// unthrottled against a plain download). One summary table at the end; the raw numbers go to
// bench/results/<timestamp>.json. Options: --rounds N (default 3), --skip-import, --skip-broker, --skip-memory,
// --skip-startup, --skip-object-store, --skip-postgres (the 7-day import into PostgreSQL against a folder, when
// PostgreSQL is installed), --skip-pacing, --skip-state, --skip-store-rule (the per-store rule: a year of
// honest sandbox data at 2, 20 and 200 stores, and its state at 20,000 stores; its own tables, after the summary),
// --skip-breakdown (where the 7-day import's time goes, stage by stage), --breakdown (that breakdown alone).
import { execSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { breakdownBenchmark, breakdownLines } from './breakdown.mjs';
import { brokerBenchmark } from './broker.mjs';
import { bigDay, importComparison, thirtyDays } from './import.mjs';
import { ROOT, formatTable, mb, seconds, toolStatus } from './lib.mjs';
import { objectStoreBenchmark } from './object-store.mjs';
import { postgresAvailable, postgresBenchmark } from './postgres.mjs';
import { pacingBenchmark } from './pacing.mjs';
import { startupBenchmark } from './startup.mjs';
import { stateBenchmark } from './state.mjs';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'skip-import': { type: 'boolean', default: false },
    'skip-memory': { type: 'boolean', default: false },
    'skip-broker': { type: 'boolean', default: false },
    'skip-startup': { type: 'boolean', default: false },
    'skip-object-store': { type: 'boolean', default: false },
    'skip-postgres': { type: 'boolean', default: false },
    'skip-state': { type: 'boolean', default: false },
    'skip-store-rule': { type: 'boolean', default: false },
    'skip-pacing': { type: 'boolean', default: false },
    'skip-breakdown': { type: 'boolean', default: false },
    // The breakdown alone: every other part skipped.
    breakdown: { type: 'boolean', default: false },
    // Only these import variants (and the CSV import), e.g. `--variants hive,lean`.
    variants: { type: 'string' },
    // How the broker benchmark measured before (load generator in this process, 200-byte references), to compare.
    'broker-load-in-process': { type: 'boolean', default: false },
    'broker-bare-bytes': { type: 'string' },
  },
});
// `--breakdown`: the breakdown alone, every other part skipped.
if (flags.breakdown) {
  for (const key of Object.keys(flags)) if (key.startsWith('skip-') && key !== 'skip-breakdown') Object.assign(flags, { [key]: true });
}
const rounds = Number(flags.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');

const started = performance.now();
const log = (/** @type {string} */ message) =>
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);

const machine = {
  /** @type {string | undefined} */
  loadAverageAtStart: undefined,
  /** @type {string | undefined} */
  loadAverageAtEnd: undefined,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGb: (totalmem() / 2 ** 30).toFixed(1),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  commit: (() => {
    try {
      return execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })(),
};
machine.loadAverageAtStart = loadavg()[0]?.toFixed(2);
log(`machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGb} GB, node ${machine.node}, commit ${machine.commit}`);

const tools = toolStatus();
if (!tools.time) log('/usr/bin/time is missing (apt-get install -y time): peak RSS is not measured');
if (!tools.curl || !tools.jq) log('curl and/or jq are missing (apt-get install -y curl jq): the curl+jq baseline is skipped');

/**
 * Everything measured, as written to bench/results/.
 * @type {{
 *   machine: typeof machine, rounds: number, startedAt: string, totalSeconds?: number,
 *   import?: Awaited<ReturnType<typeof importComparison>>, objectStore?: Awaited<ReturnType<typeof objectStoreBenchmark>>,
 *   postgres?: Awaited<ReturnType<typeof postgresBenchmark>>,
 *   thirtyDays?: Awaited<ReturnType<typeof thirtyDays>>, bigDay?: Awaited<ReturnType<typeof bigDay>>,
 *   pacing?: Awaited<ReturnType<typeof pacingBenchmark>>, startup?: Awaited<ReturnType<typeof startupBenchmark>>,
 *   broker?: Awaited<ReturnType<typeof brokerBenchmark>>, state?: Awaited<ReturnType<typeof stateBenchmark>>,
 *   breakdown?: Awaited<ReturnType<typeof breakdownBenchmark>>,
 * }}
 */
const results = { machine, rounds, startedAt: new Date().toISOString() };
/** @type {string[][]} */
const table = [];
const pass = (/** @type {boolean | undefined} */ ok) => (ok === undefined ? 'n/a' : ok ? 'yes' : 'NO');
/** @param {number | undefined} a @param {number | undefined} b */
const ratio = (a, b) => (a === undefined || b === undefined ? undefined : a / b);
const fmtRatio = (/** @type {number | undefined} */ value) => (value === undefined ? 'n/a' : `${value.toFixed(2)}x`);

let failures = 0;
/** @param {string} name @param {() => Promise<void>} body */
async function section(name, body) {
  try {
    await body();
  } catch (error) {
    failures++;
    log(`${name} FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    table.push([name, 'FAILED', '', '', '', '', '', 'see log above', 'NO']);
  }
}

if (!flags['skip-import']) {
  await section('import', async () => {
    const comparison = await importComparison({ rounds, tools, log, only: flags.variants?.split(',') });
    results.import = comparison;
    const byKey = Object.fromEntries(comparison.variants.map((variant) => [variant.key, variant]));
    const { floor, lean, curljq: curlJq } = byKey;
    for (const variant of comparison.variants) {
      const rowsPerSecond = (variant.rows ?? Number.NaN) / ((variant.wallMs ?? Number.NaN) / 1000);
      const vsLean = ratio(variant.wallMs, lean?.wallMs);
      const vsAnchor = ratio(variant.wallMs, byKey.anchor?.wallMs);
      const vsFloor = ratio(variant.wallMs, floor?.wallMs);
      const vsCurl = ratio(variant.wallMs, curlJq?.wallMs);
      let target = '';
      let met = '';
      if (variant.key === 'csv') {
        // One verdict per target, so a near miss on one does not hide the others.
        /** @type {[string, boolean | undefined][]} */
        const checks = [
          ['<=1.1x lean', vsLean === undefined ? undefined : vsLean <= 1.1],
          ['<=1.1x anchor', vsAnchor === undefined ? undefined : vsAnchor <= 1.1],
          ['<=2x floor', vsFloor === undefined ? undefined : vsFloor <= 2],
          ['RSS <= lean', variant.maxRssKb === undefined || lean?.maxRssKb === undefined ? undefined : variant.maxRssKb <= lean.maxRssKb],
          ['<=0.5x curl+jq', vsCurl === undefined ? undefined : vsCurl <= 0.5],
        ];
        target = checks.map(([name]) => name).join(', ');
        met = checks.map(([, ok]) => pass(ok)).join(', ');
      }
      if (variant.key === 'local') {
        // The window is 26 h instead of 24: the time may grow with the data fetched, no more.
        const vsUtc = ratio(variant.wallMs, byKey.csv?.wallMs);
        target = `<=1.08x UTC (${fmtRatio(vsUtc)})`;
        met = pass(vsUtc === undefined ? undefined : vsUtc <= 1.08);
      }
      if (variant.key === 'hive') {
        // The same work and bytes under other names, plus nothing: no measurable time over the flat layout.
        const byRound = variant.vsCsvByRound.map(fmtRatio).join(', ');
        const vsFlat = ratio(variant.wallMs, byKey.csv?.wallMs);
        target = `<=1.05x flat (${fmtRatio(vsFlat)}; rounds ${byRound})`;
        met = pass(vsFlat === undefined ? undefined : vsFlat <= 1.05);
      }
      if (variant.key === 'parquet') {
        const csv = byKey.csv;
        target = 'RSS <= csv';
        met = pass(variant.maxRssKb === undefined || csv?.maxRssKb === undefined ? undefined : variant.maxRssKb <= csv.maxRssKb);
      }
      const disk = variant.diskBytes === undefined ? '' : ` (${(variant.diskBytes / 2 ** 20).toFixed(1)} MB on disk)`;
      table.push([
        `7 days: ${variant.name}${disk}`,
        seconds(variant.wallMs),
        Math.round(rowsPerSecond).toLocaleString('en-US'),
        mb(variant.maxRssKb),
        fmtRatio(vsLean),
        fmtRatio(vsFloor),
        fmtRatio(vsCurl),
        target,
        met,
      ]);
    }
    log(
      `7 days: ${comparison.rows} rows per run (3 metrics), ${comparison.requests} requests, window ${comparison.window.from}..${comparison.window.to}`,
    );
    const hashed = comparison.manifestHash;
    const csvMs = byKey.csv?.wallMs;
    if (hashed && csvMs) {
      log(
        `run manifest: SHA-256 of the run's ${(hashed.bytes / 2 ** 20).toFixed(1)} MB in ${hashed.ms.toFixed(0)} ms, ${((100 * hashed.ms) / csvMs).toFixed(1)}% of the flat run's ${(csvMs / 1000).toFixed(2)} s (an upper bound: the importer hashes the bytes it already holds)`,
      );
    }
    for (const variant of comparison.variants) {
      if (variant.key !== 'lean') log(`7 days: ${variant.name} vs lean, round by round: ${variant.vsLeanByRound.map(fmtRatio).join(', ')}`);
      if (variant.key === 'csv')
        log(`7 days: ${variant.name} vs the anchor, round by round: ${variant.vsAnchorByRound.map(fmtRatio).join(', ')}`);
    }
  });
}

/** @type {string[]} */
let breakdownOut = [];
if (!flags['skip-breakdown']) {
  await section('breakdown', async () => {
    results.breakdown = await breakdownBenchmark({ rounds, log });
    breakdownOut = breakdownLines(results.breakdown);
  });
}

/**
 * A summary row of an import into some destination: its time, rows a second, peak memory, and a note.
 * @param {string} name
 * @param {{ wallMs?: number | undefined, rows?: number | undefined, maxRssKb?: number | undefined }} sample
 * @param {string} note
 */
const destinationRow = (name, sample, note) => [
  name,
  seconds(sample.wallMs),
  Math.round((sample.rows ?? Number.NaN) / ((sample.wallMs ?? Number.NaN) / 1000)).toLocaleString('en-US'),
  mb(sample.maxRssKb),
  '',
  '',
  '',
  note,
  '',
];

/**
 * The rows of a 7-day import into a destination against the same into a folder, and of its re-run.
 * @param {string} label what it is, as the rows name it
 * @param {string} how how it writes
 * @param {Awaited<ReturnType<typeof import('./lib.mjs').againstFolder>>} result
 */
const rowsAgainstFolder = (label, how, result) => [
  destinationRow('7 days: all --format csv into a folder', result.folder, ''),
  destinationRow(
    `7 days: the same into ${label} (${how})`,
    result.destination,
    `${fmtRatio(ratio(result.destination.wallMs, result.folder.wallMs))} the folder's time`,
  ),
  destinationRow(
    `7 days: the re-run into ${label} (all unchanged)`,
    result.rerun,
    `${fmtRatio(ratio(result.rerun.wallMs, result.destination.wallMs))} the first run's time`,
  ),
];

if (!flags['skip-object-store']) {
  await section('object store', async () => {
    const objects = await objectStoreBenchmark({ rounds, log });
    results.objectStore = objects;
    table.push(...rowsAgainstFolder('s3rver', 'one PUT per object', objects));
  });
}

if (!flags['skip-postgres'] && postgresAvailable) {
  await section('postgres', async () => {
    const database = await postgresBenchmark({ rounds, log });
    results.postgres = database;
    log(`postgres: database vs folder, round by round: ${database.byRound.map(fmtRatio).join(', ')}`);
    const cpu = (/** @type {number | undefined} */ value) => (value === undefined ? 'n/a' : value.toFixed(2));
    log(
      `postgres: CPU seconds (medians): folder import ${cpu(database.folder.cpuSeconds)}; database import ${cpu(database.destination.cpuSeconds)} ` +
        `+ server ${cpu(database.destination.serverCpuSeconds)}; re-run ${cpu(database.rerun.cpuSeconds)} + server ${cpu(database.rerun.serverCpuSeconds)}`,
    );
    table.push(
      ...rowsAgainstFolder('PostgreSQL', 'COPY per unit', database),
      destinationRow(
        '14 days: all into PostgreSQL',
        database.twoWeeks,
        `peak memory ${fmtRatio(ratio(database.twoWeeks.maxRssKb, database.destination.maxRssKb))} the 7 days'`,
      ),
    );
  });
} else if (!flags['skip-postgres']) {
  log('PostgreSQL is not installed (apt-get install -y postgresql): the PostgreSQL benchmark is skipped');
}

if (!flags['skip-memory']) {
  await section('30 days', async () => {
    const month = await thirtyDays({ log });
    results.thirtyDays = month;
    const weekRss = results.import?.variants.find((variant) => variant.key === 'csv')?.maxRssKb;
    const growth = ratio(month.maxRssKb, weekRss);
    table.push([
      '30 days: area-metrics all --format csv',
      seconds(month.wallMs),
      Math.round(month.rows / (month.wallMs / 1000)).toLocaleString('en-US'),
      mb(month.maxRssKb),
      '',
      '',
      '',
      `RSS within 20% of 7 days (${growth === undefined ? 'n/a' : `${((growth - 1) * 100).toFixed(0)}%`})`,
      pass(growth === undefined ? undefined : Math.abs(growth - 1) <= 0.2),
    ]);
  });
  await section('big day', async () => {
    const big = await bigDay({ log, formats: ['csv', 'parquet'] });
    results.bigDay = big;
    for (const [format, run] of Object.entries(big)) {
      const csvRss = big.csv?.maxRssKb;
      const [target, ok] =
        format === 'csv'
          ? ['RSS <=400 MB', run.maxRssKb === undefined ? undefined : run.maxRssKb <= 400 * 1024]
          : ['RSS <= csv', run.maxRssKb === undefined || csvRss === undefined ? undefined : run.maxRssKb <= csvRss];
      table.push([
        `big day 20,000 x 30, --page-size 10000, ${format} (${(run.diskBytes / 2 ** 20).toFixed(1)} MB on disk)`,
        seconds(run.wallMs),
        Math.round((run.rows ?? Number.NaN) / (run.wallMs / 1000)).toLocaleString('en-US'),
        mb(run.maxRssKb),
        '',
        '',
        '',
        target,
        pass(ok),
      ]);
    }
  });
}

/** @type {string[][]} */
const pacingTable = [];
if (!flags['skip-pacing']) {
  await section('pacing', async () => {
    const pacing = await pacingBenchmark({ rounds, log });
    results.pacing = pacing;
    for (const run of pacing.throttled) {
      pacingTable.push([
        `19 days, 171 pages, limit ${pacing.limit}/s (headers ${run.headers}), --concurrency ${run.concurrency}`,
        (run.wallMs / 1000).toFixed(2),
        `${run.vsLimit.toFixed(2)}x`,
        `${run.throttled} of ${run.requests} (${(run.share429 * 100).toFixed(1)}%)`,
        '<=1.1x the limit',
        pass(run.vsLimit <= 1.1),
      ]);
    }
    for (const run of pacing.unthrottled) {
      pacingTable.push([
        `19 days, 1,710 pages, no limit, --concurrency ${run.concurrency}: vs a plain download (${(run.floorMs / 1000).toFixed(2)} s)`,
        (run.importerMs / 1000).toFixed(2),
        `${run.vsFloor.toFixed(2)}x`,
        '0',
        'within 5% of the plain download',
        pass(run.vsFloor <= 1.05),
      ]);
    }
  });
}

/** @type {string[][]} */
const startupTable = [];
if (!flags['skip-startup']) {
  await section('start-up', async () => {
    const startup = await startupBenchmark();
    results.startup = startup;
    /** @param {string} name @param {number} ms */
    const row = (name, ms) => [
      name,
      ms.toFixed(0),
      `+${(ms - startup.bare).toFixed(0)}`,
      'within 30 ms of bare node',
      pass(ms - startup.bare <= 30),
    ];
    startupTable.push(
      ['node -e 0 (bare node)', startup.bare.toFixed(0), '', '', ''],
      row('area-metrics --version', startup.version),
      row('area-metrics --help', startup.help),
      [
        'area-metrics traffic --help (declares the import commands)',
        startup.importHelp.toFixed(0),
        `+${(startup.importHelp - startup.bare).toFixed(0)}`,
        '',
        '',
      ],
      row('area-metrics unique-users, its first request (answered 401 at once)', startup.firstRequest),
    );
  });
}

/** @type {(string | number)[][]} */
const stateTable = [];
if (!flags['skip-state']) {
  await section('state file', async () => {
    const state = await stateBenchmark();
    results.state = state;
    const kb = (/** @type {number | undefined} */ bytes) => ((bytes ?? NaN) / 1024).toFixed(1);
    const ms = (/** @type {number | undefined} */ value) => (value ?? NaN).toFixed(1);
    stateTable.push(
      [
        `a year of coverage, no profiles (${state.metrics} metrics)`,
        kb(state.coverage.bytes),
        ms(state.coverage.readMs),
        ms(state.coverage.recordMs),
        '',
        '',
      ],
      [
        `the same with a profile per complete day (${state.days} x ${state.metrics})`,
        kb(state.profiles.bytes),
        ms(state.profiles.readMs),
        ms(state.profiles.recordMs),
        'read and one day recorded within 50 ms',
        pass((state.profiles.readMs ?? Infinity) <= 50 && (state.profiles.recordMs ?? Infinity) <= 50),
      ],
    );
  });
}

/** @type {(string | number)[][]} */
const brokerTable = [];
if (!flags['skip-broker']) {
  await section('broker', async () => {
    const broker = await brokerBenchmark({
      log,
      rounds,
      loadInProcess: flags['broker-load-in-process'],
      ...(flags['broker-bare-bytes'] !== undefined ? { bareBytes: Number(flags['broker-bare-bytes']) } : {}),
    });
    results.broker = broker;
    const bare = broker.load.bare;
    const cached = broker.load.broker;
    const minimal = broker.load.fastify;
    const cpu = (/** @type {{ serverCpuUsPerAnswer?: number }} */ load) =>
      load.serverCpuUsPerAnswer === undefined ? 'n/a' : load.serverCpuUsPerAnswer.toFixed(1);
    /** A broker row held to a share of the bare server's rate, a p99 under 20 ms and no failure. */
    /** @param {string} name @param {typeof bare} load @param {number} minShare */
    const measuredAgainstBare = (name, load, minShare) => {
      const share = load.requestsPerSecond / bare.requestsPerSecond;
      const failed = load.non2xx + load.errors;
      return [
        name,
        Math.round(load.requestsPerSecond),
        load.p50Ms,
        load.p99Ms,
        cpu(load),
        `${failed}`,
        `>=${Math.round(minShare * 100)}% of bare (${(share * 100).toFixed(0)}%), p99 <20 ms, no failures`,
        [share >= minShare, load.p99Ms < 20, failed === 0].map(pass).join(', '),
      ];
    };
    brokerTable.push(
      [
        `bare node:http, ${broker.referenceBytes}-byte JSON`,
        Math.round(bare.requestsPerSecond),
        bare.p50Ms,
        bare.p99Ms,
        cpu(bare),
        `${bare.non2xx + bare.errors}`,
        '',
        '',
      ],
      [
        `minimal fastify route, same ${broker.referenceBytes}-byte JSON`,
        Math.round(minimal.requestsPerSecond),
        minimal.p50Ms,
        minimal.p99Ms,
        cpu(minimal),
        `${minimal.non2xx + minimal.errors}`,
        `reference (${((minimal.requestsPerSecond / bare.requestsPerSecond) * 100).toFixed(0)}% of bare)`,
        '',
      ],
      measuredAgainstBare(`area-metrics broker, cached token (${broker.brokerBodyBytes}-byte answer)`, cached, 0.75),
      measuredAgainstBare('broker, cached token, App Check enforced (a genuine token, repeated)', broker.load.attested, 0.65),
      [
        `App Check verify on every request (${broker.verifying.requests} new tokens, 10 at a time)`,
        Math.round(broker.verifying.requestsPerSecond),
        broker.verifying.p50Ms,
        broker.verifying.p99Ms,
        cpu(broker.verifying),
        `${broker.verifying.failed}`,
        'reported',
        '',
      ],
      [
        `cold burst: ${broker.cold.burst} concurrent, empty cache`,
        '',
        '',
        `${(broker.cold.wallMs / 1000).toFixed(2)} s total`,
        '',
        `${broker.cold.burst - broker.cold.ok}`,
        `exactly 1 auth call (${broker.cold.authCalls})`,
        pass(broker.cold.authCalls === 1 && broker.cold.ok === broker.cold.burst && broker.cold.distinctTokens === 1),
      ],
      [
        'burst on a token refreshed ahead, auth server hanging',
        Math.round(broker.refreshing.requestsPerSecond),
        broker.refreshing.p50Ms,
        broker.refreshing.p99Ms,
        '',
        `${broker.refreshing.non2xx + broker.refreshing.errors}`,
        `p99 <50 ms, 1 auth call (${broker.refreshing.authCalls}), no failures`,
        [broker.refreshing.p99Ms < 50, broker.refreshing.authCalls === 1, broker.refreshing.non2xx + broker.refreshing.errors === 0]
          .map(pass)
          .join(', '),
      ],
    );
  });
}

const totalSeconds = (performance.now() - started) / 1000;
results.totalSeconds = totalSeconds;
machine.loadAverageAtEnd = loadavg()[0]?.toFixed(2);
const resultsDir = join(ROOT, 'bench', 'results');
await mkdir(resultsDir, { recursive: true });
const resultsPath = join(resultsDir, `${results.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);

const out = [];
out.push('');
out.push(
  `area-metrics benchmark: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGb} GB RAM, node ${machine.node}, ` +
    `commit ${machine.commit}; 1-minute load average ${machine.loadAverageAtStart} at start, ${machine.loadAverageAtEnd} at end`,
);
if (table.length) {
  out.push(`Import (median of ${rounds} interleaved runs; sandbox 2,000 stores x 20 zones in its own process, loopback)`);
  out.push(formatTable(['run', 'wall s', 'rows/s', 'peak RSS MB', 'vs lean', 'vs floor', 'vs curl+jq', 'target', 'met'], table));
}
if (breakdownOut.length) {
  out.push('');
  out.push(...breakdownOut);
}
if (pacingTable.length) {
  out.push('');
  out.push(
    `Pacing (sandbox in its own process, ${results.pacing?.latencyMs} ms latency; unthrottled: median of ${rounds} interleaved rounds)`,
  );
  out.push(formatTable(['run', 'wall s', 'vs limit / vs plain download', '429s', 'target', 'met'], pacingTable));
}
if (startupTable.length) {
  out.push('');
  out.push(`Start-up (median of ${results.startup?.runs} interleaved runs, the same node binary)`);
  out.push(formatTable(['command', 'wall ms', 'vs bare ms', 'target', 'met'], startupTable));
}
if (stateTable.length) {
  out.push('');
  out.push(
    `State file (median of ${results.state?.rounds} interleaved rounds, in-process: read = load and check, record = one day completed under the lock, fsync included)`,
  );
  out.push(formatTable(['state', 'kB', 'read ms', 'record ms', 'target', 'met'], stateTable));
}
if (brokerTable.length) {
  const broker = /** @type {NonNullable<typeof results.broker>} */ (results.broker);
  out.push('');
  out.push(
    `Broker (autocannon ${broker.loadGenerator === 'in-process' ? 'in the benchmark process' : 'in a process of its own'}, ${broker.connections} connections, median of ${broker.rounds} interleaved ` +
      `${broker.durationSeconds} s rounds after a warm-up; servers in their own processes, broker log to a file)`,
  );
  out.push(formatTable(['run', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/answer', 'failed', 'target', 'met'], brokerTable));
}
out.push(`total ${totalSeconds.toFixed(0)} s; raw numbers in ${resultsPath}`);
process.stdout.write(`${out.join('\n')}\n`);
if (!flags['skip-store-rule']) execSync(`node ${join(ROOT, 'bench', 'store-rule.mjs')}`, { stdio: 'inherit' });
if (failures) process.exitCode = 1;
