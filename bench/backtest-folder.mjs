#!/usr/bin/env node
// The backtest of a folder at the vendor's scale, as a user runs it: `node bench/backtest-folder.mjs [--dir D]
// [--stores 20000] [--days 365] [--zones 4] [--format csv] [--metric all] [--runs 1]` after `npm run build`. Writes
// the sandbox's honest data once into D as an import lays it out (a file per UTC day and metric, the import's own
// encoder, a state that says how it was written; kept, so later runs only time), then times the built binary's
// `backtest <metric> -o D --json` over it and prints its holds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DESCRIPTORS } from '../dist/metrics/descriptors.js';
import { headerOf, resultEncoder } from '../dist/metrics/encode.js';
import { METRIC_NAMES } from '../dist/metrics/names.js';
import { compareText } from '../dist/metrics/schema.js';
import { unitPath } from '../dist/output/layout.js';
import { Dataset } from '../dist/sandbox/data.js';
import { ImportState } from '../dist/state/import-state.js';
import { FileStateStorage } from '../dist/state/storage/storage.js';

const { values: flags } = parseArgs({
  options: {
    dir: { type: 'string' },
    stores: { type: 'string', default: '20000' },
    days: { type: 'string', default: '365' },
    zones: { type: 'string', default: '4' },
    format: { type: 'string', default: 'csv' },
    metric: { type: 'string', default: 'all' },
    runs: { type: 'string', default: '1' },
    profile: { type: 'string' },
    // Another build's binary, to compare (`--cli /elsewhere/bin/area-metrics.js`); runs alternate with this one's.
    cli: { type: 'string' },
  },
});
const stores = Number(flags.stores);
const days = Number(flags.days);
const zones = Number(flags.zones);
const format = /** @type {'csv' | 'ndjson'} */ (flags.format);
const dir = flags.dir ?? join(tmpdir(), `backtest-folder-${stores}x${days}x${zones}-${format}`);
const FROM = '2025-06-01';
const DAY_MS = 86_400_000;
const STATE = '.area-metrics-state.json';

if (!existsSync(join(dir, STATE))) {
  const madeStarted = performance.now();
  await rm(dir, { recursive: true, force: true });
  const dataset = new Dataset({ stores, zones, days: days + 3, seed: 1, metrics: DESCRIPTORS });
  const encoding = { format, shape: /** @type {const} */ ('rows') };
  for (const metric of DESCRIPTORS) {
    const encode = resultEncoder(metric, encoding);
    const header = headerOf(metric, encoding);
    await mkdir(join(dir, metric.name), { recursive: true });
    for (let index = 0; index < days; index++) {
      const fromMs = Date.parse(`${FROM}T00:00:00Z`) + index * DAY_MS;
      const refs = dataset.query(metric.name, { fromMs, toMs: fromMs + DAY_MS - 1 }, undefined, new Date(fromMs + 5 * DAY_MS));
      const results = dataset
        .slice(metric.name, refs, 0, refs.count)
        .sort((a, b) => compareText(a.store_code, b.store_code) || compareText(a.date, b.date));
      const day = new Date(fromMs).toISOString().slice(0, 10);
      const text = (header ?? '') + results.map((result) => encode(result) ?? '').join('');
      await writeFile(join(dir, unitPath({ metric, day }, format, 'flat')), text);
    }
  }
  const state = await ImportState.load(new FileStateStorage(join(dir, STATE)), {
    now: new Date(),
    metricNames: METRIC_NAMES,
    mode: 'utc',
    layout: 'flat',
    format,
  });
  await state.recordRun({ time: new Date().toISOString(), command: 'import', exitCode: 0, rows: {} });
  console.log(`made ${dir} in ${((performance.now() - madeStarted) / 1000).toFixed(1)} s`);
}

const clis = [new URL('../bin/area-metrics.js', import.meta.url).pathname, ...(flags.cli === undefined ? [] : [flags.cli])];
// CPU seconds as well as elapsed ones: on a shared machine the elapsed time says more about the others' load.
const TIME = '/usr/bin/time';
const rows = [];
for (let run = 0; run < Number(flags.runs); run++) {
  for (const cli of clis) {
    const started = performance.now();
    const nodeFlags = flags.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', flags.profile];
    const command = [process.execPath, ...nodeFlags, cli, 'backtest', flags.metric, '-o', dir, '--json'];
    const timed = existsSync(TIME);
    const [program = process.execPath, ...args] = timed ? [TIME, '-f', 'cpu %U %S maxkb %M', ...command] : command;
    const { status: code, stdout, stderr } = spawnSync(program, args, { encoding: 'utf8', maxBuffer: 1e9 });
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`backtest exited ${code}: ${stderr}`);
    const { metrics } = JSON.parse(stdout);
    const cpu = /cpu ([\d.]+) ([\d.]+) maxkb (\d+)/.exec(stderr);
    rows.push({
      cli: clis.length === 1 ? 'this' : cli === clis[0] ? 'this' : 'other',
      stores,
      days,
      format,
      metric: flags.metric,
      nights: metrics.map((/** @type {{nights: number}} */ each) => each.nights).join(' '),
      held: metrics.map((/** @type {{held: unknown[]}} */ each) => each.held.length).join(' '),
      seconds: Number(seconds.toFixed(1)),
      cpuS: cpu === null ? null : Number((Number(cpu[1]) + Number(cpu[2])).toFixed(1)),
      maxMB: cpu === null ? null : Math.round(Number(cpu[3]) / 1024),
      load: Number((loadavg()[0] ?? 0).toFixed(1)),
    });
  }
}
console.table(rows);
