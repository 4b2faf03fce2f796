/**
 * Each store judged on its own, against the sandbox's weekly rhythm: the BUILT binary imports five weeks of honest
 * days (none held, Saturdays and all), then a day broken as vendors break it.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxPublishing } from '../../src/sandbox/types.js';
import { assertBuilt } from '../helpers/cli.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);
const daysAgo = daysBefore(CLOCK);
const DAY = daysAgo(2);

let history: string;
const tempDir = useTempDirs('store-days-');

async function run(out: string, args: readonly string[]) {
  const result = await runCli(importArgs(sandbox, 'unique-users', out, ...args), { env: SECRET_ENV });
  const warnings = result.stderr.split('\n').filter((line) => line.startsWith('warn: ') && !line.includes('not over until'));
  return { code: result.code, stderr: result.stderr, warnings };
}

/** A copy of the five weeks of history, with the day published as `distorted` says. */
async function judgeDay(distorted: NonNullable<SandboxPublishing['distorted']>) {
  const out = await tempDir();
  await cp(history, out, { recursive: true });
  sandbox.setPublishing({ distorted });
  return { out, ...(await run(out, ['--date', DAY])) };
}

const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 12, zones: 4, days: 40 });

beforeAll(async () => {
  assertBuilt();
  // Kept for every test of the file (temp dirs of a test go with it).
  history = await mkdtemp(join(tmpdir(), 'store-days-history-'));
  // Five weeks of honest days with a Saturday twice a Tuesday: none is held.
  const honest = await run(history, ['--from', daysAgo(37), '--to', daysAgo(3)]);
  expect(honest.code, honest.stderr).toBe(0);
  expect(honest.warnings).toEqual([]);
}, 30_000);

afterAll(async () => {
  if (history !== undefined) await rm(history, { recursive: true, force: true });
});

describe('each store judged against its own weekdays', () => {
  it('an honest day is not held', async () => {
    expect((await judgeDay([])).warnings).toEqual([]);
  });

  it('a store gone dark is held and named with its range; status names it', async () => {
    const { out, code, warnings } = await judgeDay([{ day: DAY, stores: ['S003'], factor: 0 }]);
    expect(code).toBe(0);
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: unique-users ${DAY}: suspect: 1 store outside their usual sum of unique_users: S003 0 \\(expected \\d+ to \\d+, its same weekday\\); file written, not recorded complete`,
        ),
      ),
    ]);
    const status = await runCli(['status', '-o', out]);
    expect(status.stdout).toMatch(new RegExp(`^unique-users .*  ${DAY} suspect \\(1 store outside their range: S003\\)$`, 'm'));
    const json = JSON.parse((await runCli(['status', '-o', out, '--json'])).stdout) as { metrics: { pending: unknown[] }[] };
    expect(json.metrics[0]!.pending).toEqual([
      expect.objectContaining({ day: DAY, reason: 'suspect', suspectStores: 1, firstStores: ['S003'] }),
    ]);
    expect((await runCli(['status', '-o', out, '--format', 'prometheus'])).stdout).toContain(
      'area_metrics_suspect_stores{metric="unique-users",key="unique-users"} 1\n',
    );
  });

  it('four stores gone dark: the first 3 named with their ranges, the fourth counted, in the warning and in status', async () => {
    const { out, warnings } = await judgeDay([{ day: DAY, stores: ['S002', 'S005', 'S008', 'S011'], factor: 0 }]);
    const named = ['S002', 'S005', 'S008'].map((store) => `${store} 0 \\(expected [\\d.]+ to [\\d.]+, its same weekday\\)`).join(', ');
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`suspect: 4 stores outside their usual sum of unique_users: ${named}, and 1 more; file written`)),
    ]);
    expect((await runCli(['status', '-o', out])).stdout).toContain(
      `${DAY} suspect (4 stores outside their range: S002, S005, S008 and 1 more)`,
    );
  });

  it('a store at five times its usual is held and named', async () => {
    const { warnings } = await judgeDay([{ day: DAY, stores: ['S007'], factor: 5 }]);
    expect(warnings).toEqual([expect.stringContaining('suspect: 1 store outside their usual sum of unique_users: S007 ')]);
  });

  it('a half day is one suspicion of the whole day', async () => {
    const { warnings } = await judgeDay([{ day: DAY, factor: 0.5 }]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /suspect: 1[12] of 12 stores moved together to x0\.[45]\d* of their usual sum of unique_users \(the vendor's batch\?\)/,
      ),
    ]);
  });

  it('a chain growing from 3 to 12 stores is its new normal: no day held, nobody settles anything', async () => {
    const out = await tempDir();
    const late = ['S004', 'S005', 'S006', 'S007', 'S008', 'S009', 'S010', 'S011', 'S012'];
    const early = Array.from({ length: 21 }, (_, index) => daysAgo(37 - index));
    sandbox.setPublishing({ hidden: early.map((day) => ({ day, stores: late })) });
    const grown = await run(out, ['--from', daysAgo(37), '--to', daysAgo(3)]);
    expect(grown.code, grown.stderr).toBe(0);
    expect(grown.warnings).toEqual([]);
    const status = JSON.parse((await runCli(['status', '-o', out, '--json'])).stdout) as {
      metrics: { stores: number; suspect: unknown[] }[];
    };
    expect(status.metrics).toEqual([expect.objectContaining({ stores: 12, suspect: [] })]);
  });
});
