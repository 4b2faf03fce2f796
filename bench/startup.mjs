// Start-up: `area-metrics --version` and `--help` against bare `node -e 0`, the same node binary, interleaved runs.
// A cron job or a script that calls the tool pays this on every call; the target is within 30 ms of bare node.
// A command's first request: `unique-users` against a local server that answers 401 at once, so the process loads
// everything an import loads (HTTP, decoding, sinks, state), sends one request and ends (exit 3).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { BIN, utcDay } from './lib.mjs';

const RUNS = 15;

/** @param {readonly string[]} args @param {number} [expectedCode] */
function wallMs(args, expectedCode = 0) {
  const started = performance.now();
  const env = { ...process.env, AREA_METRICS_CLIENT_ID: 'bench', AREA_METRICS_CLIENT_SECRET: 'bench' };
  const child = spawn(process.execPath, args, { stdio: 'ignore', env });
  return new Promise((resolve, reject) => {
    child.once('close', (code) => {
      if (code !== expectedCode) reject(new Error(`node ${args.join(' ')} exited with ${code}, not ${expectedCode}`));
      else resolve(performance.now() - started);
    });
  });
}

const median = (/** @type {readonly number[]} */ values) =>
  /** @type {number} */ ([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]);

/**
 * Median wall time of each command line, the runs interleaved so that load on the machine falls on all alike.
 * @returns {Promise<{ runs: number, bare: number, version: number, help: number, importHelp: number, firstRequest: number }>}
 */
export async function startupBenchmark() {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"Invalid credentials."}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  /** @type {Record<string, [readonly string[], number]>} */
  const cases = {
    bare: [['-e', '0'], 0],
    version: [[BIN, '--version'], 0],
    help: [[BIN, '--help'], 0],
    importHelp: [[BIN, 'traffic', '--help'], 0],
    firstRequest: [[BIN, 'unique-users', '--base-url', baseUrl, '--date', utcDay(-2), '-o', '-'], 3],
  };
  /** @type {Record<string, number[]>} */
  const samples = Object.fromEntries(Object.keys(cases).map((key) => [key, []]));
  try {
    for (let run = 0; run < RUNS; run++) {
      for (const [key, [args, code]] of Object.entries(cases)) samples[key]?.push(await wallMs(args, code));
    }
  } finally {
    server.close();
  }
  const of = (/** @type {keyof typeof cases} */ key) => median(samples[key] ?? []);
  return {
    runs: RUNS,
    bare: of('bare'),
    version: of('version'),
    help: of('help'),
    importHelp: of('importHelp'),
    firstRequest: of('firstRequest'),
  };
}
