#!/usr/bin/env node
// The lean reference: what a careful engineer would hand-write for this job, as a measuring stick for the importer
// (not product code). Same pages, same HTTP stack and pool, same units in flight as the importer. Each page is
// JSON.parse'd and each record checked (types, the date's shape, the value's shape); each row is one string, a sort
// key (store_code, date, zone, separated by NUL, the lowest code point) followed by its CSV line; a unit's strings
// are sorted with the default sort, the keys cut off, and the unit written as one CSV file. The count the first page
// announces is checked against the results received. No per-row objects, no comparator.
// Not done (the importer does): the date's calendar and offset ranges, the result's day against the requested one,
// repeated results and zones, lone surrogates, the page bound, re-fetching an incomplete unit, retries, atomic files
// with fsync, the state file. See docs/bench.md.
// `--plain-fetch`: the anchor a user would write by hand, Node's global fetch as it comes (its own default pool; the
// npm undici the importer's proxy-aware dispatcher is built on never loaded), everything else the same.
// Usage: node bench/lean.mjs --base-url URL --from D1 --to D2 --out DIR [--concurrency 4] [--page-size 1000] [--plain-fetch]
// Prints one JSON line on stdout: { units, requests, rows }.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { basicAuthorization } from '../dist/fetch/basic-auth.js';
import { firstPageUrl } from '../dist/fetch/urls.js';
import { dayWindow } from '../dist/window/day-mode.js';
import { daysBetween } from '../dist/window/days.js';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    out: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'page-size': { type: 'string', default: '1000' },
    'plain-fetch': { type: 'boolean', default: false },
  },
});
/** A flag the script cannot run without. @param {string | undefined} value @param {string} flag */
function required(value, flag) {
  if (value === undefined) throw new Error(`missing --${flag}`);
  return value;
}

const baseUrl = new URL(required(values['base-url'], 'base-url'));
const out = required(values.out, 'out');
const concurrency = Number(values.concurrency);
const pageSize = Number(values['page-size']);
const credentials = { clientId: process.env.AREA_METRICS_CLIENT_ID ?? '', clientSecret: process.env.AREA_METRICS_CLIENT_SECRET ?? '' };
const headers = { authorization: basicAuthorization(credentials), accept: 'application/json' };
const dispatcher = values['plain-fetch']
  ? undefined
  : (await import('../dist/fetch/dispatcher.js')).createDispatcher({ connections: concurrency + 2, timeoutMs: 60_000, env: process.env });
// `dispatcher` is undici's extension to fetch's init (its own copy of the types); Node's fetch honours it.
const init = /** @type {RequestInit} */ (/** @type {unknown} */ (dispatcher ? { headers, dispatcher } : { headers }));

const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
const SCREEN_TIME = /^(\d{2,4}):([0-5]\d):([0-5]\d)$/;
const TRAFFIC = /^0*(?:0(?:\.\d+)?|1(?:\.0+)?)$/;
const isText = (/** @type {unknown} */ value) => typeof value === 'string' && value.length > 0 && !value.includes('\u0000');
const quote = (/** @type {string} */ text) => (/[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
/**
 * A value of the API (any JSON) and what each metric makes of it: its CSV cells, or undefined when it is invalid.
 * @typedef {{ header: string, cells: (v: any) => string | undefined }} MetricShape
 */
/** @type {Record<string, MetricShape>} */
const METRICS = {
  'unique-users': {
    header: 'store_code,date,day,granularity,zone,unique_users',
    cells: (v) => (Number.isSafeInteger(v.unique_users) && v.unique_users >= 0 ? `${v.unique_users}` : undefined),
  },
  'avg-screen-time': {
    header: 'store_code,date,day,granularity,zone,avg_screen_time,avg_screen_time_seconds',
    cells: (v) => {
      const match = typeof v.avg_screen_time === 'string' && SCREEN_TIME.exec(v.avg_screen_time);
      return match ? `${v.avg_screen_time},${Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3])}` : undefined;
    },
  },
  traffic: {
    header: 'store_code,date,day,granularity,zone,traffic_pct',
    cells: (v) => (typeof v.traffic_pct === 'string' && TRAFFIC.test(v.traffic_pct) ? v.traffic_pct : undefined),
  },
};

let requests = 0;
let rowCount = 0;

/** @param {{ metric: string, day: string }} unit */
async function importUnit({ metric, day }) {
  const { header, cells } = /** @type {MetricShape} */ (METRICS[metric]);
  /** @type {string[]} */
  const rows = [];
  /** @type {number | undefined} */
  let count;
  let received = 0;
  /** @type {URL | undefined} */
  let url = firstPageUrl(baseUrl, metric, { ...dayWindow(day, 'utc'), pageSize });
  while (url) {
    const response = await fetch(url, init);
    if (response.status !== 200) throw new Error(`${metric} ${day}: HTTP ${response.status}`);
    const page = JSON.parse(await response.text());
    requests++;
    if (!Number.isInteger(page.count) || !Array.isArray(page.results)) throw new Error(`${metric} ${day}: not a page`);
    count ??= page.count;
    received += page.results.length;
    for (const r of page.results) {
      if (
        !isText(r.store_code) ||
        typeof r.date !== 'string' ||
        !DATE.test(r.date) ||
        r.granularity !== 'daily' ||
        !Array.isArray(r.values)
      ) {
        throw new Error(`${metric} ${day}: invalid record`);
      }
      const key = `${r.store_code}\u0000${r.date}\u0000`;
      const line = `${quote(r.store_code)},${r.date},${r.date.slice(0, 10)},daily,`;
      for (const v of r.values) {
        const value = isText(v.zone) ? cells(v) : undefined;
        if (value === undefined) throw new Error(`${metric} ${day}: invalid value`);
        rows.push(`${key}${v.zone}\u0000${line}${quote(v.zone)},${value}\n`);
      }
    }
    url = page.next ? new URL(page.next) : undefined;
  }
  if (received !== count) throw new Error(`${metric} ${day}: expected ${count} results, received ${received}`);
  rows.sort();
  let text = `${header}\n`;
  for (const row of rows) text += row.slice(row.lastIndexOf('\u0000') + 1);
  rowCount += rows.length;
  await mkdir(join(out, metric), { recursive: true });
  await writeFile(join(out, metric, `${day}.csv`), text);
}

const units = Object.keys(METRICS).flatMap((metric) =>
  daysBetween(required(values.from, 'from'), required(values.to, 'to')).map((day) => ({ metric, day })),
);
let nextUnit = 0;
async function worker() {
  for (let unit = units[nextUnit++]; unit !== undefined; unit = units[nextUnit++]) await importUnit(unit);
}
await Promise.all(Array.from({ length: concurrency }, worker));
await dispatcher?.close();
process.stdout.write(`${JSON.stringify({ units: units.length, requests, rows: rowCount })}\n`);
