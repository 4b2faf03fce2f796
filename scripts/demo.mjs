#!/usr/bin/env node
// `npm run demo`: the whole tool working with no account and no network. Starts the sandbox on a free loopback
// port, then does what the README's cron section does into ./demo-data: a 3-day backfill, the nightly catch-up and the
// morning's status check; shows what was written, and stops the sandbox.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/area-metrics.js');
const out = 'demo-data';
// Bold headings only on a terminal that wants colour: a piped or logged demo stays plain text.
const bold = process.stdout.isTTY && !process.env.NO_COLOR;
const step = (/** @type {string} */ text) => console.log(bold ? `\n\x1b[1m== ${text}\x1b[0m` : `\n== ${text}`);

// The sandbox's clock and every run's at 09:00 UTC today, when the README's morning check runs: whatever the hour the
// demo is run at (before 01:00 UTC the day before yesterday is not over yet, and the check would rightly alert).
const clock = { AREA_METRICS_NOW: `${new Date().toISOString().slice(0, 10)}T09:00:00Z` };
const sandbox = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--stores', '25', '--zones', '8'], {
  env: { ...process.env, ...clock },
  stdio: ['ignore', 'pipe', 'inherit'],
});
/** @type {string} */
const baseUrl = await new Promise((resolveUrl, reject) => {
  let buffer = '';
  sandbox.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffer += chunk;
    const match = /listening on (http:\/\/\S+)/.exec(buffer);
    if (match?.[1]) resolveUrl(match[1]);
  });
  sandbox.on('exit', (code) => reject(new Error(`sandbox exited early (${code})`)));
});

const env = {
  ...process.env,
  ...clock,
  AREA_METRICS_BASE_URL: baseUrl,
  AREA_METRICS_CLIENT_ID: 'demo-client',
  AREA_METRICS_CLIENT_SECRET: 'demo-secret',
};

/** @param {string[]} args */
function cli(...args) {
  console.log(`$ area-metrics ${args.join(' ')}`);
  const result = spawnSync(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`area-metrics ${args[0]} exited with ${result.status}`);
}

const utcDaysAgo = (/** @type {number} */ days) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);

/** @param {string} dir */
function tree(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tree(path);
    else console.log(`  ${relative(process.cwd(), path)}  (${statSync(path).size} bytes)`);
  }
}

try {
  rmSync(out, { recursive: true, force: true });
  step(`sandbox running at ${baseUrl} (credentials demo-client / demo-secret, passed via environment variables)`);
  // The day before yesterday is the newest day that can be final: yesterday's window still holds today's local day
  // of every store east of UTC.
  const lastFinal = utcDaysAgo(2);
  step('first, once: a 3-day backfill through the day before yesterday, all three metrics, in pages of 10 results');
  cli('all', '--from', utcDaysAgo(4), '--to', lastFinal, '--page-size', '10', '-o', out);
  step('what cron runs every night: catch up through yesterday (written, final the next night), re-import the last 2 complete days');
  cli('all', '--catch-up', '--lookback', '2', '-o', out);
  step("the morning's check: 1 day behind is normal, so --max-behind 1 exits 0");
  cli('status', '-o', out, '--max-behind', '1');
  step('the files written');
  tree(out);
  // The file is the UTC day; a row's `day` is its store's local date, the next one for stores east of UTC.
  step(`the first rows of traffic/${lastFinal}.csv (the UTC day ${lastFinal}; \`day\` is each store's local date)`);
  console.log(
    readFileSync(join(out, 'traffic', `${lastFinal}.csv`), 'utf8')
      .split('\n')
      .slice(0, 6)
      .join('\n'),
  );
  step('streaming NDJSON to another tool (here: the first 2 lines)');
  console.log(`$ area-metrics unique-users -o - | head -2`);
  const piped = spawnSync(process.execPath, [bin, 'unique-users', '-o', '-', '-q'], { env, encoding: 'utf8' });
  console.log(piped.stdout.split('\n').slice(0, 2).join('\n'));
  step(`done: the data is in ${relative(process.cwd(), out) || '.'}/; run \`npm test\` for the test suite`);
} finally {
  sandbox.kill('SIGTERM');
}
