#!/usr/bin/env node
// The lean reference: what a careful engineer would hand-write for this job in about 60 lines, as a measuring stick
// for the importer (not product code). Same pages, same HTTP stack and pool, same units in flight as the importer;
// each page is JSON.parse'd, each record checked with typeof and three regexes, rows built with template strings,
// the unit's rows sorted and written as one CSV file per unit. No completeness check, no atomic file, no state.
// Usage: node bench/lean.mjs --base-url URL --from D1 --to D2 --out DIR [--concurrency 4] [--page-size 1000]
// Prints one JSON line on stdout: { units, requests, rows }.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { basicAuthorization } from '../dist/fetch/basic-auth.js';
import { createDispatcher } from '../dist/fetch/dispatcher.js';
import { firstPageUrl } from '../dist/fetch/urls.js';
import { daysBetween, utcDayBounds } from '../dist/window/days.js';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    out: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'page-size': { type: 'string', default: '1000' },
  },
});
const baseUrl = new URL(values['base-url']);
const concurrency = Number(values.concurrency);
const pageSize = Number(values['page-size']);
const credentials = { clientId: process.env.AREA_METRICS_CLIENT_ID, clientSecret: process.env.AREA_METRICS_CLIENT_SECRET };
const headers = { authorization: basicAuthorization(credentials), accept: 'application/json' };
const dispatcher = createDispatcher({ connections: concurrency + 2, timeoutMs: 60_000, env: process.env });

const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})$/;
const quote = (text) => (/[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const METRICS = {
  'unique-users': {
    header: 'store_code,date,day,granularity,zone,unique_users',
    cells: (v) => (Number.isInteger(v.unique_users) && v.unique_users >= 0 ? `${v.unique_users}` : undefined),
  },
  'avg-screen-time': {
    header: 'store_code,date,day,granularity,zone,avg_screen_time,avg_screen_time_seconds',
    cells: (v) => {
      const match = typeof v.avg_screen_time === 'string' && /^(\d{2,}):([0-5]\d):([0-5]\d)$/.exec(v.avg_screen_time);
      return match ? `${v.avg_screen_time},${Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3])}` : undefined;
    },
  },
  traffic: {
    header: 'store_code,date,day,granularity,zone,traffic_pct',
    cells: (v) => (typeof v.traffic_pct === 'string' && /^[01]\.\d{5}$/.test(v.traffic_pct) ? v.traffic_pct : undefined),
  },
};

let requests = 0;
let rowCount = 0;

async function importUnit({ metric, day }) {
  const { header, cells } = METRICS[metric];
  const rows = [];
  let url = firstPageUrl(baseUrl, metric, { ...utcDayBounds(day), pageSize });
  while (url) {
    const response = await fetch(url, { headers, dispatcher });
    if (response.status !== 200) throw new Error(`${metric} ${day}: HTTP ${response.status}`);
    const page = JSON.parse(await response.text());
    requests++;
    for (const r of page.results) {
      if (typeof r.store_code !== 'string' || !DATE.test(r.date) || r.granularity !== 'daily' || !Array.isArray(r.values)) {
        throw new Error(`${metric} ${day}: invalid record`);
      }
      const prefix = `${quote(r.store_code)},${r.date},${r.date.slice(0, 10)},daily,`;
      for (const v of r.values) {
        const value = typeof v.zone === 'string' ? cells(v) : undefined;
        if (value === undefined) throw new Error(`${metric} ${day}: invalid value`);
        rows.push({ key: `${r.store_code}\u0000${r.date}\u0000${v.zone}`, line: `${prefix}${quote(v.zone)},${value}\n` });
      }
    }
    url = page.next ? new URL(page.next) : undefined;
  }
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  rowCount += rows.length;
  await mkdir(join(values.out, metric), { recursive: true });
  await writeFile(join(values.out, metric, `${day}.csv`), `${header}\n${rows.map((row) => row.line).join('')}`);
}

const units = Object.keys(METRICS).flatMap((metric) => daysBetween(values.from, values.to).map((day) => ({ metric, day })));
let nextUnit = 0;
async function worker() {
  while (nextUnit < units.length) await importUnit(units[nextUnit++]);
}
await Promise.all(Array.from({ length: concurrency }, worker));
await dispatcher.close();
process.stdout.write(`${JSON.stringify({ units: units.length, requests, rows: rowCount })}\n`);
