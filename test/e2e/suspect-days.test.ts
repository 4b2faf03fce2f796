/**
 * Numbers that look wrong: a complete day whose values are all zero, or far from the median of the days before, is
 * held (or warned about, or not judged). The BUILT binary against a sandbox that publishes a day wrong and then
 * corrects it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SandboxPublishing } from '../../src/sandbox/types.js';
import { assertBuilt } from '../helpers/cli.js';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { latestUnit } from '../helpers/manifests.js';
import { dataFiles, useTempDirs } from '../helpers/tmp.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const STATE = '.area-metrics-state.json';
/** At noon (UTC) the day before yesterday is over and yesterday is not. */
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);

const daysAgo = daysBefore(CLOCK);

const tempDir = useTempDirs('suspect-days-');

beforeAll(assertBuilt);
// Enough stores and zones that an honest day's total stays near the median.
const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 12, zones: 4, days: 16, clientId: 'suspect-client' });

async function run(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string; warnings: string[] }> {
  const [metric, ...rest] = args;
  const result = await runCli([metric!, '--base-url', sandbox.url, '--client-id', sandbox.clientId, ...rest], {
    env: { ...SECRET_ENV, ...env },
  });
  return {
    code: result.code,
    stderr: result.stderr,
    warnings: result.stderr.split('\n').filter((line) => line.startsWith('warn: ') && !line.includes('not over until')),
  };
}

interface Pending {
  reason: string;
  measure?: string;
  value?: number;
  median?: number;
  allZero?: boolean;
  factor?: number;
}

async function pendingOf(out: string, key: string): Promise<Record<string, Pending>> {
  const state = JSON.parse(await readFile(join(out, STATE), 'utf8')) as { metrics: Record<string, { pending?: Record<string, Pending> }> };
  return state.metrics[key]?.pending ?? {};
}

function distort(rule: NonNullable<SandboxPublishing['distorted']>[number]): void {
  sandbox.setPublishing({ distorted: [rule] });
}

describe('a day whose numbers look wrong', () => {
  it("a drop is held pending, written, and listed by status as a gap; the vendor's correction completes it; other metrics are unaffected", async () => {
    const out = await tempDir();
    const history = await run(['all', '-o', out, '--from', daysAgo(12), '--to', daysAgo(3)]);
    expect(history.code, history.stderr).toBe(0);
    expect(history.warnings).toEqual([]);

    const day = daysAgo(2);
    distort({ day, metrics: ['unique-users'], factor: 0.1 });
    const held = await run(['all', '-o', out, '--catch-up']);
    expect(held.code, held.stderr).toBe(0);
    expect(held.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: unique-users ${day}: suspect: ` +
            // Every store fell by the same factor: the per-store rule names it the vendor's batch (it judges the day
            // once its stores have history; the total's median is for keys without).
            `\\d+ of 12 stores moved together to x0\\.1\\d* of their usual sum of unique_users \\(the vendor's batch\\?\\); ` +
            `file written, not recorded complete \\(--on-suspect hold\\): the next --catch-up asks again, \`area-metrics accept unique-users --date ${day} -o ${out}\` records it as final if its numbers are right$`,
        ),
      ),
    ]);
    expect(await dataFiles(out)).toContain(`unique-users/${day}.csv`);
    const pending = (await pendingOf(out, 'unique-users'))[day]!;
    expect(pending).toMatchObject({ reason: 'suspect', measure: 'sum of unique_users' });
    expect(pending).toMatchObject({ factor: expect.any(Number) });
    for (const metric of ['avg-screen-time', 'traffic']) expect(await pendingOf(out, metric)).not.toHaveProperty(day);
    // The manifest says the held file is provisional, and why; the other metrics' files of the day are final.
    expect(await latestUnit(out, 'unique-users', day)).toMatchObject({ changed: true, status: 'provisional', reason: 'suspect' });
    expect(await latestUnit(out, 'traffic', day)).toMatchObject({ status: 'final', finalized: true });

    const status = await runCli(['status', '-o', out, '--max-behind', '1']);
    expect(status.code).toBe(8);
    expect(status.stderr).toContain(`unique-users (2 days behind, gaps ${day}, suspect ${day})`);
    expect(status.stdout).toMatch(
      new RegExp(
        `^unique-users .*  ${day} suspect \\(most stores at x0\\.1\\d* of their usual\\), ${daysAgo(1)} imported before it was over$`,
        'm',
      ),
    );
    // The text says how the held day settles, with a command that works as printed.
    expect(status.stdout).toContain(
      `held: unique-users ${day} suspect: the next --catch-up asks again; if the numbers are right, \`area-metrics accept unique-users --date ${day} -o ${out}\` records it as final\n`,
    );
    const json = JSON.parse((await runCli(['status', '-o', out, '--json'])).stdout) as {
      metrics: { key: string; suspect: [string, string][]; pending: { day: string; reason: string; settledBy: string[] }[] }[];
    };
    expect(json.metrics.map(({ key, suspect }) => [key, suspect])).toEqual([
      ['avg-screen-time', []],
      ['traffic', []],
      ['unique-users', [[day, day]]],
    ]);
    expect(json.metrics[2]!.pending).toContainEqual(expect.objectContaining({ day, reason: 'suspect', settledBy: ['catch-up', 'accept'] }));
    expect(json.metrics[2]!.pending).toContainEqual(expect.objectContaining({ reason: 'not-over', settledBy: ['catch-up'] }));
    const prometheus = (await runCli(['status', '-o', out, '--format', 'prometheus'])).stdout;
    expect(prometheus).toContain('area_metrics_suspect_days{metric="unique-users",key="unique-users"} 1\n');
    expect(prometheus).toContain('area_metrics_suspect_days{metric="traffic",key="traffic"} 0\n');

    // Fetched again while still wrong: one line for the metric, not the warning in full again.
    const again = await run(['unique-users', '-o', out, '--catch-up']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.warnings).toEqual([
      `warn: unique-users: 1 day still held as suspect (${day}): fetched again, the numbers still look wrong; ` +
        '`area-metrics status` names their stores, `area-metrics accept` settles a day whose numbers are right',
    ]);

    // The vendor corrects the day: the next --catch-up asks for it again and completes it.
    sandbox.setPublishing({});
    const before = sandbox.requests.length;
    const corrected = await run(['unique-users', '-o', out, '--catch-up']);
    expect(corrected.code, corrected.stderr).toBe(0);
    expect(corrected.warnings).toEqual([]);
    expect(sandbox.requests.slice(before).map((request) => request.query.datetime_gte?.slice(0, 10))).toContain(day);
    expect(await pendingOf(out, 'unique-users')).not.toHaveProperty(day);
    expect((await runCli(['status', '-o', out, '--max-behind', '1'])).code).toBe(0);
    // The next night's manifest marks it final: this run made it so.
    expect(await latestUnit(out, 'unique-users', day)).toMatchObject({ changed: true, status: 'final', finalized: true });
  });

  it('all zeros are held even without history, accept settles the day; a drop with too little history is not judged', async () => {
    const out = await tempDir();
    expect((await run(['unique-users', '-o', out, '--from', daysAgo(5), '--to', daysAgo(3)])).code).toBe(0);
    const day = daysAgo(2);
    sandbox.setPublishing({
      distorted: [
        { day, metrics: ['avg-screen-time'], factor: 0 },
        { day, metrics: ['unique-users'], factor: 0.1 },
      ],
    });
    const result = await run(['all', '-o', out, '--date', day]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.warnings).toEqual([
      `warn: avg-screen-time ${day}: suspect: every value is zero (the mean avg_screen_time in seconds is 0); file written, not recorded complete (--on-suspect hold): ` +
        `the next --catch-up asks again, \`area-metrics accept avg-screen-time --date ${day} -o ${out}\` records it as final if its numbers are right`,
    ]);
    expect(await pendingOf(out, 'avg-screen-time')).toEqual({
      [day]: { reason: 'suspect', measure: 'mean avg_screen_time in seconds', value: 0, allZero: true, stores: 12 },
    });
    // Three complete days before it are too few to judge a drop by.
    expect(await pendingOf(out, 'unique-users')).toEqual({});
    expect((await runCli(['status', '-o', out])).stdout).toMatch(
      new RegExp(`^avg-screen-time .*  ${day} suspect \\(every value zero\\)$`, 'm'),
    );

    // A real anomaly (the mall was closed): a person settles it.
    const accepted = await runCli(['accept', 'avg-screen-time', '--date', day, '-o', out]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(await pendingOf(out, 'avg-screen-time')).toEqual({});
    const status = JSON.parse((await runCli(['status', '-o', out, '--json'])).stdout) as {
      metrics: { key: string; suspect: unknown[]; accepted: unknown[] }[];
    };
    expect(status.metrics.find(({ key }) => key === 'avg-screen-time')).toMatchObject({ suspect: [], accepted: [[day, day]] });
    // The text shows the accepted day too, and no longer a way to settle it.
    const text = (await runCli(['status', '-o', out])).stdout;
    expect(text).toMatch(new RegExp(`^avg-screen-time .*  ${day}  .*$`, 'm'));
    expect(text.split('\n')[0]).toMatch(/ accepted +pending$/);
    expect(text).not.toContain('held: avg-screen-time');
    const before = sandbox.requests.length;
    expect((await run(['avg-screen-time', '-o', out, '--catch-up'])).code).toBe(0);
    expect(sandbox.requests.slice(before).map((request) => request.query.datetime_gte?.slice(0, 10))).not.toContain(day);
  });

  it('--on-suspect warn records the day complete with the warning; AREA_METRICS_ON_SUSPECT=off does not judge', async () => {
    const out = await tempDir();
    expect((await run(['unique-users', '-o', out, '--from', daysAgo(11), '--to', daysAgo(3)])).code).toBe(0);
    const day = daysAgo(2);
    distort({ day, factor: 0.1 });
    const warned = await run(['unique-users', '-o', out, '--date', day, '--on-suspect', 'warn']);
    expect(warned.code, warned.stderr).toBe(0);
    expect(warned.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: unique-users ${day}: suspect: \\d+ of 12 stores moved together .*; recorded complete anyway \\(--on-suspect warn\\)$`,
        ),
      ),
    ]);
    expect(await pendingOf(out, 'unique-users')).toEqual({});

    expect((await runCli(['reopen', 'unique-users', '--date', day, '-o', out])).code).toBe(0);
    const off = await run(['unique-users', '-o', out, '--date', day], { AREA_METRICS_ON_SUSPECT: 'off' });
    expect(off.code, off.stderr).toBe(0);
    expect(off.warnings).toEqual([]);
    expect(await pendingOf(out, 'unique-users')).toEqual({});

    const bad = await run(['unique-users', '-o', out, '--date', day, '--on-suspect', 'ignore']);
    expect(bad.code).toBe(2);
  });
});
