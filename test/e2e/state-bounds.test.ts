import { readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { constants, deflateRawSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { STATE_BOUNDS } from '../../src/state/storage/state-bounds.js';
import { assertBuilt, ROOT } from '../helpers/cli.js';
import { clockedCli, daysBefore, noonToday, servingDaysInProgress, useSandbox } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';

const SECRET = 'State-Bounds-S3cret-5';
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK, { AREA_METRICS_CLIENT_SECRET: SECRET });
const daysAgo = daysBefore(CLOCK);
const tempDir = useTempDirs('state-bounds-e2e-');
const STATE = '.area-metrics-state.json';
/** What the issue allows a run reading a hostile state: far below what inflating the bomb costs (1 GiB). */
const PEAK_RSS_KB = 300 * 1024;

beforeAll(assertBuilt);
const sandbox = useSandbox({ port: 0, stores: 12, zones: 2, days: 10, seed: 5, clientSecret: SECRET, ...servingDaysInProgress(CLOCK) });

/**
 * About 1 MB of Base64 that inflates to 1 GiB: one 16 MiB block of one byte, fully flushed (so it stands alone),
 * repeated, then an empty final block.
 */
function deflateBomb(): string {
  const block = deflateRawSync(Buffer.alloc(16 * 1024 * 1024, 'a'), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([...Array.from({ length: 64 }, () => block), deflateRawSync(Buffer.alloc(0))]).toString('base64');
}

/** Imports a day into `out` as a process, and returns its exit code, its `error:` lines and its peak RSS in kilobytes. */
async function importDay(out: string): Promise<{ code: number | null; errors: string[]; peakKb: number }> {
  const rssFile = join(out, 'peak-rss');
  const result = await runCli(
    ['traffic', '--date', daysAgo(2), '--base-url', sandbox().url, '--client-id', sandbox().clientId, '-o', out],
    {
      process: true,
      timeoutMs: 60_000,
      env: { NODE_OPTIONS: `--import ${pathToFileURL(join(ROOT, 'test/helpers/peak-rss.mjs')).href}`, PEAK_RSS_FILE: rssFile },
    },
  );
  const errors = result.stderr.split('\n').filter((line) => line.startsWith('error: '));
  return { code: result.code, errors, peakKb: Number(await readFile(rssFile, 'utf8')) };
}

describe('a state that would make the import allocate without bound', () => {
  const bomb = deflateBomb();
  const complete = [[daysAgo(5), daysAgo(5)]];

  it.each([
    ['the key’s store set', { traffic: { complete, stores: 12, storeSet: 'b0mb' } }],
    ['a day’s store figures', { traffic: { complete, storeFigures: { [daysAgo(5)]: ['b0mb', 'AAAA'.repeat(6)] } } }],
  ])(
    'a deflate bomb in %s: exit 2, one line, peak RSS far below the bomb',
    async (_where, metrics) => {
      const out = await tempDir();
      await writeFile(join(out, STATE), JSON.stringify({ version: 5, metrics, storeSets: { b0mb: bomb } }));
      const run = await importDay(out);
      expect(run.code).toBe(2);
      expect(run.errors).toEqual([expect.stringMatching(/store set "b0mb" is damaged; fix or delete it/)]);
      expect(run.peakKb).toBeLessThan(PEAK_RSS_KB);
    },
    60_000,
  );

  it('a state file larger than any state: exit 2 without reading it', async () => {
    const out = await tempDir();
    const path = join(out, STATE);
    await writeFile(path, '{"version":5,"metrics":{},"storeSets":{}}');
    // Sparse: no disk used, and a reader that read it would hold 64 MiB and more.
    await truncate(path, STATE_BOUNDS.textBytes + 1);
    const run = await importDay(out);
    expect(run.code).toBe(2);
    expect(run.errors).toEqual([expect.stringMatching(/is damaged: \d+ bytes, more than a state holds/)]);
    expect(run.peakKb).toBeLessThan(PEAK_RSS_KB);
  }, 60_000);
});
