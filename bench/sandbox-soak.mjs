#!/usr/bin/env node
// Sandbox soak: many requests to `area-metrics sandbox` in its own process, over loopback only, the kinds a flood or a
// long benchmark sends (unknown paths, unauthenticated and authenticated metric requests, token requests without
// credentials), each with an 8 KB query; the sandbox's RSS read from /proc at the start and every `sampleEvery`
// answers. Its request log keeps the newest requests, cut short, and only counts unrouted ones: RSS stays flat.
// `node bench/sandbox-soak.mjs [--requests 100000] [--sample-every 10000] [--concurrency 16] [--deadline-seconds 600]`
// (the built binary: `npm run build` first). The end-to-end test of the sandbox runs it with 20,000 requests.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { formatTable, startSandboxProcess, utcDay } from './lib.mjs';

const MOST_REQUESTS = 1_000_000;
const PADDING = 'x'.repeat(8 * 1024);
const BASIC = `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`;

/** The resident set of a process in KB, from /proc (Linux). @param {number} pid */
export function rssKb(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]);
}

/**
 * The request number `index` sends: the kinds in turn, each URL its own.
 * @param {number} index
 * @returns {{ method: 'GET' | 'POST', path: string, headers?: Record<string, string> }}
 */
function requestOf(index) {
  const day = utcDay(-2);
  const window = `datetime_gte=${day}T00:00:00Z&datetime_lte=${day}T23:59:59Z`;
  switch (index % 4) {
    case 0:
      return { method: 'GET', path: `/flood/${index}?n=${index}&pad=${PADDING}` };
    case 1:
      return { method: 'GET', path: `/api/bi/area-metrics/traffic/?${window}&n=${index}&pad=${PADDING}` };
    case 2:
      return {
        method: 'GET',
        path: `/api/bi/area-metrics/traffic/?${window}&page_size=10&n=${index}&pad=${PADDING}`,
        headers: { authorization: BASIC },
      };
    default:
      return { method: 'POST', path: `/oauth2/token?n=${index}&pad=${PADDING}` };
  }
}

/** The sandbox's request counts, and how many requests it lists. @param {string} url */
async function requestCounts(url) {
  const response = await fetch(`${url}/_sandbox/requests`);
  if (!response.ok) throw new Error(`GET /_sandbox/requests: HTTP ${response.status}`);
  const { received, unrouted, capacity, requests } =
    /** @type {{ received: number, unrouted: number, capacity: number, requests: unknown[] }} */ (await response.json());
  return { received, unrouted, capacity, kept: requests.length };
}

/**
 * Starts a sandbox process and sends it `requests` requests, `concurrency` at a time on kept-alive connections,
 * stopping early past `deadlineMs`. Returns the RSS samples (answers so far, KB), the sandbox's request counts at the
 * end, the statuses seen and the wall time.
 * With `heapMb`, the sandbox's V8 heap is capped at that many MB (a log that grew would end it).
 * @param {{ requests?: number, sampleEvery?: number, concurrency?: number, deadlineMs?: number, heapMb?: number }} [options]
 */
export async function sandboxSoak({ requests = 100_000, sampleEvery = 10_000, concurrency = 16, deadlineMs = 600_000, heapMb } = {}) {
  if (!(Number.isInteger(requests) && requests >= 1 && requests <= MOST_REQUESTS)) throw new Error(`requests must be 1..${MOST_REQUESTS}`);
  const heapFlags = heapMb === undefined ? [] : [`--max-old-space-size=${heapMb}`];
  const sandbox = await startSandboxProcess(['--stores', '20', '--zones', '4', '--days', '3'], heapFlags);
  const pid = /** @type {number} */ (sandbox.child.pid);
  const agent = new Agent({ connections: concurrency, pipelining: 1 });
  const started = performance.now();
  try {
    const samples = [{ answered: 0, rssKb: rssKb(pid) }];
    /** @type {Record<number, number>} */
    const statuses = {};
    const progress = { next: 0, answered: 0 };
    const worker = async () => {
      while (progress.next < requests && performance.now() - started < deadlineMs) {
        const { method, path, headers } = requestOf(progress.next);
        progress.next += 1;
        const answer = await request(`${sandbox.url}${path}`, { method, headers, dispatcher: agent }).catch(async (error) => {
          // A sandbox that ran out of memory resets the connections: say that, not only ECONNRESET.
          await new Promise((resolve) => setTimeout(resolve, 500));
          const { exitCode, signalCode } = sandbox.child;
          if (exitCode === null && signalCode === null) throw error;
          throw new Error(`the sandbox exited (${exitCode ?? signalCode}) after ${progress.answered} answers`);
        });
        await answer.body.dump();
        statuses[answer.statusCode] = (statuses[answer.statusCode] ?? 0) + 1;
        progress.answered += 1;
        if (progress.answered % sampleEvery === 0) samples.push({ answered: progress.answered, rssKb: rssKb(pid) });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const wallMs = performance.now() - started;
    return { samples, counts: await requestCounts(sandbox.url), statuses, wallMs, answered: progress.answered };
  } finally {
    await agent.close();
    await sandbox.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '100000' },
      'sample-every': { type: 'string', default: '10000' },
      concurrency: { type: 'string', default: '16' },
      'deadline-seconds': { type: 'string', default: '600' },
      'heap-mb': { type: 'string' },
    },
  });
  const result = await sandboxSoak({
    requests: Number(values.requests),
    sampleEvery: Number(values['sample-every']),
    concurrency: Number(values.concurrency),
    deadlineMs: Number(values['deadline-seconds']) * 1000,
    ...(values['heap-mb'] === undefined ? {} : { heapMb: Number(values['heap-mb']) }),
  });
  const rows = result.samples.map(({ answered, rssKb: kb }) => [answered, (kb / 1024).toFixed(0)]);
  process.stdout.write(`${formatTable(['requests answered', 'sandbox RSS (MB)'], rows)}\n`);
  process.stdout.write(
    `${result.answered} requests in ${(result.wallMs / 1000).toFixed(1)} s; statuses ${JSON.stringify(result.statuses)}; ` +
      `the sandbox counted ${result.counts.received} received, ${result.counts.unrouted} unrouted, and kept ${result.counts.kept} ` +
      `(at most ${result.counts.capacity})\n`,
  );
  if (result.answered < Number(values.requests)) {
    process.stdout.write(`stopped at the deadline after ${result.answered} requests\n`);
    process.exitCode = 1;
  }
}
