// Pacing benchmark: the backfill of issue 29's report (300 stores, 50 ms latency, 19 days of `all` at --page-size 100:
// 171 pages) against a sandbox that throttles at 10 requests a second, at --concurrency 4 and 16, with and without
// announced limits: wall time against the 17.1 s the limit allows, and the share of requests answered 429. Beside
// it the same 19 days unthrottled, against a plain download (bench/floor.mjs) at the same concurrency: pacing must
// cost a run the vendor does not limit nothing measurable. The unthrottled runs use --page-size 10 (1,710 pages), so
// that the requests, not the start of a node process, make the time.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, ROOT, measure, median, startSandboxProcess, tempDir, utcDay } from './lib.mjs';

const CREDENTIALS = { AREA_METRICS_CLIENT_ID: 'demo-client', AREA_METRICS_CLIENT_SECRET: 'demo-secret' };
const LIMIT = 10;
const LATENCY_MS = 50;
const SUMMARY = /imported (\d+) of (\d+) units, (\d+) rows(?:, \d+ warnings?)? in [\d.]+ s, (\d+) requests(?:, (\d+) answered 429)?/;

/**
 * @typedef {{ baseUrl: string, from: string, to: string, concurrency: number, pageSize: number }} PacedRun
 */

/** @param {string} baseUrl @param {object} faults */
async function setFaults(baseUrl, faults) {
  const response = await fetch(`${baseUrl}/_sandbox/faults`, { method: 'POST', body: JSON.stringify(faults) });
  if (!response.ok) throw new Error(`setting sandbox faults failed: HTTP ${response.status} ${await response.text()}`);
}

/** The flags the importer and the floor client share: the vendor, the window, the page size, the concurrency. @param {PacedRun} paced */
function pacedFlags({ baseUrl, from, to, concurrency, pageSize }) {
  return ['--base-url', baseUrl, '--from', from, '--to', to, '--page-size', String(pageSize), '--concurrency', String(concurrency)];
}

/** @param {PacedRun} paced */
async function importRun(paced) {
  const out = await tempDir(`pacing-c${paced.concurrency}`);
  try {
    const args = [BIN, 'all', ...pacedFlags(paced), '-o', out];
    const run = await measure(process.execPath, args, { env: { ...process.env, ...CREDENTIALS }, useTime: false });
    const summary = SUMMARY.exec(run.stderr);
    if (run.code !== 0 || !summary || summary[1] !== summary[2])
      throw new Error(`importer failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
    return { wallMs: run.wallMs, requests: Number(summary[4]), throttled: Number(summary[5] ?? 0) };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** @param {PacedRun} paced @returns {Promise<{ wallMs: number, requests: number }>} */
async function floorRun(paced) {
  const args = [join(ROOT, 'bench', 'floor.mjs'), ...pacedFlags(paced)];
  const run = await measure(process.execPath, args, { env: { ...process.env, ...CREDENTIALS }, useTime: false });
  if (run.code !== 0) throw new Error(`floor client failed with exit ${run.code}:\n${run.stderr.slice(-2000)}`);
  return { wallMs: run.wallMs, requests: JSON.parse(run.stdout).requests };
}

/**
 * The throttled runs (one each: each takes the limit's 17 s), then the unthrottled importer and the plain download
 * interleaved for `rounds` rounds at each concurrency, compared round by round.
 * @param {{ rounds: number, log: (line: string) => void }} options
 */
export async function pacingBenchmark({ rounds, log }) {
  const sandbox = await startSandboxProcess(['--stores', '300', '--zones', '6', '--days', '21', '--latency-ms', String(LATENCY_MS)]);
  const window = { baseUrl: sandbox.url, from: utcDay(-20), to: utcDay(-2), pageSize: 100 };
  const manyPages = { ...window, pageSize: 10 };
  const throttled = [];
  const unthrottled = [];
  try {
    for (const headers of ['none', 'draft']) {
      for (const concurrency of [4, 16]) {
        await setFaults(sandbox.url, { latencyMs: LATENCY_MS, rateLimit: { perSecond: LIMIT, headers } });
        const run = await importRun({ ...window, concurrency });
        const pages = run.requests - run.throttled;
        const result = {
          headers,
          concurrency,
          ...run,
          pages,
          vsLimit: run.wallMs / ((pages / LIMIT) * 1000),
          share429: run.throttled / run.requests,
        };
        throttled.push(result);
        log(
          `throttled at ${LIMIT}/s (headers ${headers}), --concurrency ${concurrency}: ${(run.wallMs / 1000).toFixed(2)} s for ${pages} pages ` +
            `(${result.vsLimit.toFixed(2)}x the limit's ${(pages / LIMIT).toFixed(1)} s), ${run.throttled} of ${run.requests} requests answered 429`,
        );
      }
    }
    await setFaults(sandbox.url, { latencyMs: LATENCY_MS });
    for (const concurrency of [4, 16]) {
      // One unmeasured warm-up of each: the sandbox's page cache holds the pages, node's file cache the binary.
      await floorRun({ ...manyPages, concurrency });
      await importRun({ ...manyPages, concurrency });
      /** @type {number[]} */
      const ratios = [];
      /** @type {{ importer: number[], floor: number[] }} */
      const samples = { importer: [], floor: [] };
      for (let round = 1; round <= rounds; round++) {
        const floor = await floorRun({ ...manyPages, concurrency });
        const importer = await importRun({ ...manyPages, concurrency });
        samples.floor.push(floor.wallMs);
        samples.importer.push(importer.wallMs);
        ratios.push(importer.wallMs / floor.wallMs);
        log(
          `unthrottled, --concurrency ${concurrency}, round ${round}/${rounds}: importer ${(importer.wallMs / 1000).toFixed(2)} s, plain download ${(floor.wallMs / 1000).toFixed(2)} s (${importer.requests} and ${floor.requests} requests)`,
        );
      }
      // Rounds >= 1: each median is a number.
      const of = (/** @type {number[]} */ values) => median(values) ?? Number.NaN;
      unthrottled.push({
        concurrency,
        importerMs: of(samples.importer),
        floorMs: of(samples.floor),
        vsFloor: of(ratios),
        vsFloorByRound: ratios.map((ratio) => Number(ratio.toFixed(3))),
      });
    }
  } finally {
    await sandbox.stop();
  }
  return { window, limit: LIMIT, latencyMs: LATENCY_MS, throttled, unthrottled };
}
