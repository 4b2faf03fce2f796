#!/usr/bin/env node
// The backtest's cost at the vendor's scale: `node bench/backtest.mjs [--stores 20000] [--days 365] [--zones 4]
// [--metrics unique-users]` after `npm run build`. Replays the sandbox's data night by night through the import's
// judgement (`src/backtest/sandbox-days.ts`, no files), and times apart what the sandbox spends making its data, so the
// rule's own cost per night is what remains; then reads one day's unit file of that size back (CSV, NDJSON, Parquet),
// as a backtest of a folder reads each night's.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { backtestSandbox } from '../dist/backtest/sandbox-days.js';
import { METRICS } from '../dist/metrics/descriptors.js';
import { storedResults } from '../dist/output/read-back.js';
import { Dataset } from '../dist/sandbox/data.js';

const { values: flags } = parseArgs({
  options: {
    stores: { type: 'string', default: '20000' },
    days: { type: 'string', default: '365' },
    zones: { type: 'string', default: '4' },
    metrics: { type: 'string', default: 'unique-users,avg-screen-time,traffic' },
  },
});
const stores = Number(flags.stores);
const days = Number(flags.days);
const zones = Number(flags.zones);
const metrics = flags.metrics.split(',').map((name) => METRICS[/** @type {keyof typeof METRICS} */ (name)]);
const FROM = '2025-06-01';

// What the sandbox alone spends making the same results (the replay pays it too; a folder's backtest reads instead).
const dataset = new Dataset({ stores, zones, days: days + 3, seed: 1, metrics });
const makeStarted = performance.now();
const DAY_MS = 86_400_000;
for (const metric of metrics)
  for (let day = 0; day < days; day++) {
    const fromMs = Date.parse(`${FROM}T00:00:00Z`) + day * DAY_MS;
    const refs = dataset.query(metric.name, { fromMs, toMs: fromMs + DAY_MS - 1 }, undefined, new Date(fromMs + 5 * DAY_MS));
    dataset.slice(metric.name, refs, 0, refs.count);
  }
const makeMs = performance.now() - makeStarted;

const started = performance.now();
const replays = await backtestSandbox({ stores, zones, seed: 1, from: FROM, days, metrics });
const totalMs = performance.now() - started;
const nights = days * metrics.length;
console.table([
  {
    stores,
    days,
    metrics: metrics.length,
    held: replays.map(({ held }) => held.length).join(' '),
    totalS: Number((totalMs / 1000).toFixed(1)),
    sandboxDataS: Number((makeMs / 1000).toFixed(1)),
    rulePerNightMs: Math.round((totalMs - makeMs) / nights),
  },
]);

// One day's file of that size read back as the backtest reads it.
const dir = await mkdtemp(join(tmpdir(), 'backtest-bench-'));
const day = Date.parse(`${FROM}T00:00:00Z`);
const refs = dataset.query('unique-users', { fromMs: day, toMs: day + DAY_MS - 1 }, undefined, new Date(day + 5 * DAY_MS));
const results = dataset.slice('unique-users', refs, 0, refs.count).sort((a, b) => (a.store_code < b.store_code ? -1 : 1));
const csv = ['store_code,date,day,granularity,zone,unique_users'];
const ndjson = [];
for (const result of results)
  for (const entry of result.values) {
    csv.push(`${result.store_code},${result.date},${result.date.slice(0, 10)},daily,${entry.zone},${entry.unique_users}`);
    ndjson.push(
      JSON.stringify({
        metric: 'unique-users',
        store_code: result.store_code,
        date: result.date,
        day: result.date.slice(0, 10),
        granularity: 'daily',
        zone: entry.zone,
        unique_users: entry.unique_users,
      }),
    );
  }
const reads = [];
for (const [format, text] of /** @type {const} */ ([
  ['csv', `${csv.join('\n')}\n`],
  ['ndjson', `${ndjson.join('\n')}\n`],
])) {
  const path = join(dir, `day.${format}`);
  await writeFile(path, text);
  const readStarted = performance.now();
  const back = await storedResults(Buffer.from(text), format);
  reads.push({
    format,
    rows: csv.length - 1,
    results: back.length,
    MB: Number((text.length / 1e6).toFixed(1)),
    readMs: Math.round(performance.now() - readStarted),
  });
}
console.table(reads);
await rm(dir, { recursive: true, force: true });
