#!/usr/bin/env node
// The physical floor of an import: the same pages, the same HTTP stack (global fetch over the importer's own undici
// dispatcher), the same concurrency (units in flight), following `next` and throwing each body away unparsed.
// Usage: node bench/floor.mjs --base-url URL --from D1 --to D2 [--concurrency 4] [--page-size 1000]
//        (credentials from AREA_METRICS_CLIENT_ID / AREA_METRICS_CLIENT_SECRET)
// Prints one JSON line on stdout: { units, requests, bytes }.
import { parseArgs } from 'node:util';
import { createDispatcher } from '../dist/fetch/dispatcher.js';
import { basicAuthorization } from '../dist/fetch/basic-auth.js';
import { firstPageUrl } from '../dist/fetch/urls.js';
import { dayWindow } from '../dist/window/day-mode.js';
import { daysBetween } from '../dist/window/days.js';

const METRICS = ['unique-users', 'avg-screen-time', 'traffic'];

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'page-size': { type: 'string', default: '1000' },
  },
});
/** A flag the script cannot run without. @param {string | undefined} value @param {string} flag */
function required(value, flag) {
  if (value === undefined) throw new Error(`missing --${flag}`);
  return value;
}

const baseUrl = new URL(required(values['base-url'], 'base-url'));
const concurrency = Number(values.concurrency);
const pageSize = Number(values['page-size']);
const headers = {
  authorization: basicAuthorization({
    clientId: process.env.AREA_METRICS_CLIENT_ID ?? '',
    clientSecret: process.env.AREA_METRICS_CLIENT_SECRET ?? '',
  }),
  accept: 'application/json',
};
// Same pool as the importer builds (connections = concurrency + 2).
const dispatcher = createDispatcher({ connections: concurrency + 2, timeoutMs: 60_000, env: process.env });
// `dispatcher` is undici's extension to fetch's init (its own copy of the types); Node's fetch honours it.
const init = /** @type {RequestInit} */ (/** @type {unknown} */ ({ headers, dispatcher }));

// Same plan order as the importer: metric, then day.
const units = METRICS.flatMap((metric) =>
  daysBetween(required(values.from, 'from'), required(values.to, 'to')).map((day) => ({ metric, day })),
);

let requests = 0;
let bytes = 0;

/** @param {{ metric: string, day: string }} unit */
async function fetchUnit(unit) {
  /** @type {URL | undefined} */
  let url = firstPageUrl(baseUrl, unit.metric, { ...dayWindow(unit.day, 'utc'), pageSize });
  while (url) {
    const response = await fetch(url, init);
    if (response.status !== 200) throw new Error(`${unit.metric} ${unit.day}: HTTP ${response.status}`);
    // The body is needed only for `next`; read it as text and find the link without building the object tree.
    const text = await response.text();
    requests++;
    bytes += text.length;
    const match = /"next":(null|"([^"]*)")/.exec(text);
    url = match?.[2] ? new URL(match[2]) : undefined;
  }
}

let nextUnit = 0;
async function worker() {
  for (let unit = units[nextUnit++]; unit !== undefined; unit = units[nextUnit++]) await fetchUnit(unit);
}
await Promise.all(Array.from({ length: concurrency }, worker));
await dispatcher.close();
process.stdout.write(`${JSON.stringify({ units: units.length, requests, bytes })}\n`);
