/**
 * `area-metrics status`: how far behind each metric's output is, from the state file alone (no credentials, no
 * request); the BUILT binary, on state files written by an import or by hand.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockedCli, noonToday, servingDaysInProgress, daysBefore } from '../helpers/sandbox-clock.js';
import { VENDOR_SECRET, useSandbox } from '../helpers/vendor.js';
import { useTempDirs } from '../helpers/tmp.js';

const STATE = '.area-metrics-state.json';

/** One clock for the sandbox and every run: at noon (UTC) the day before yesterday is over and yesterday is not. */
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
const { runCli } = clockedCli(CLOCK);

const tempDir = useTempDirs('status-');

const sandbox = useSandbox({ ...servingDaysInProgress(CLOCK), port: 0, stores: 3, zones: 2, days: 6, clientId: 'status-client' });

async function folderWithState(content: unknown): Promise<string> {
  const out = await tempDir();
  await mkdir(out, { recursive: true });
  await writeFile(join(out, STATE), typeof content === 'string' ? content : JSON.stringify(content));
  return out;
}

interface StatusJson {
  state: string;
  yesterday: string;
  maxBehind: number | null;
  metrics: {
    key: string;
    metric: string;
    firstDay: string | null;
    lastCompleteDay: string | null;
    daysBehind: number | null;
    stores: number | null;
    gaps: [string, string][];
    pending: { day: string; reason: string; missingStores?: number }[];
    behind: boolean;
  }[];
  lastRun: { time: string; command: string; exitCode: number; rows: Record<string, number> } | null;
}

describe('area-metrics status', () => {
  it('after imports: per metric the last complete day, days behind, stores and pending days; no request, no credentials', async () => {
    const out = await tempDir();
    const base = ['--base-url', sandbox.url, '--client-id', sandbox.clientId, '--client-secret', VENDOR_SECRET, '-o', out];
    expect((await runCli(['traffic', ...base, '--from', daysAgo(4), '--to', daysAgo(1)])).code).toBe(0);
    expect((await runCli(['unique-users', ...base, '--date', daysAgo(4)])).code).toBe(0);
    sandbox.setPublishing({ hidden: [{ day: daysAgo(2), stores: ['S002'] }, { day: daysAgo(1) }] });
    try {
      expect((await runCli(['unique-users', ...base, '--catch-up'])).code).toBe(0);
    } finally {
      sandbox.setPublishing({});
    }

    const before = sandbox.requests.length;
    const text = await runCli(['status', '-o', out]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toBe('');
    expect(sandbox.requests.length).toBe(before);
    const lines = text.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(lines.slice(0, 3)).toEqual([
      ['metric', 'first day', 'last complete', 'behind', 'stores', 'gaps', 'given up', 'accepted', 'pending'],
      // Yesterday is imported but not over: pending, so a metric is at least 1 day behind yesterday.
      ['traffic', daysAgo(4), daysAgo(2), '1', '3', '-', '-', '-', `${daysAgo(1)} imported before it was over`],
      [
        'unique-users',
        daysAgo(4),
        daysAgo(3),
        '2',
        '3',
        '-',
        '-',
        '-',
        `${daysAgo(2)} partly published (1 store missing), ${daysAgo(1)} imported before it was over`,
      ],
    ]);
    expect(lines[3]).toEqual([
      expect.stringMatching(
        /^last run: \d{4}-\d{2}-\d{2}T[\d:.]+Z unique-users --catch-up --max-days 31, exit 0, rows: unique-users \d+, requests \d+ \(0 answered 429\)$/,
      ),
    ]);
    expect(lines[4]).toEqual(['days: UTC (--days utc)']);

    const json = await runCli(['status', '-o', out, '--json', '--max-behind', '1']);
    expect(json.code).toBe(8);
    expect(json.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/behind by more than --max-behind 1, or with gaps: unique-users \(2 days behind\)$/),
    ]);
    const report = JSON.parse(json.stdout) as StatusJson;
    expect(report).toMatchObject({ state: join(out, STATE), days: 'utc', yesterday: daysAgo(1), maxBehind: 1, lastRun: { exitCode: 0 } });
    expect(report.metrics).toEqual([
      {
        key: 'traffic',
        metric: 'traffic',
        firstDay: daysAgo(4),
        lastCompleteDay: daysAgo(2),
        daysBehind: 1,
        stores: 3,
        gaps: [],
        gapDays: 0,
        pending: [{ day: daysAgo(1), reason: 'not-over', stores: 3, settledBy: ['catch-up'] }],
        givenUp: [],
        accepted: [],
        suspect: [],
        behind: false,
      },
      {
        key: 'unique-users',
        metric: 'unique-users',
        firstDay: daysAgo(4),
        lastCompleteDay: daysAgo(3),
        daysBehind: 2,
        stores: 3,
        gaps: [],
        gapDays: 0,
        pending: [
          { day: daysAgo(2), reason: 'partly-published', missingStores: 1, stores: 2, settledBy: ['catch-up', 'accept'] },
          { day: daysAgo(1), reason: 'not-over', stores: 0, settledBy: ['catch-up'] },
        ],
        givenUp: [],
        accepted: [],
        suspect: [],
        behind: true,
      },
    ]);
    expect((await runCli(['status', '-o', out, '--max-behind', '2'])).code).toBe(0);
  });

  it('--max-behind: a metric more than n days behind, counted from where its coverage starts before its first complete day, exits 8', async () => {
    const out = await folderWithState({ version: 1, lastCompleteDay: { traffic: daysAgo(4), 'avg-screen-time': daysAgo(1) } });
    const behind = await runCli(['status', '-o', out, '--max-behind', '2']);
    expect(behind.code).toBe(8);
    expect(behind.stderr).toContain('traffic (3 days behind)');
    expect(behind.stderr).not.toContain('avg-screen-time');
    expect((await runCli(['status', '-o', out, '--max-behind', '3'])).code).toBe(0);
    // Without --max-behind, status only reports.
    expect((await runCli(['status', '-o', out])).code).toBe(0);

    // Never complete: behind from the day before coverage starts, where the key was first asked for.
    const never = await folderWithState({
      version: 2,
      metrics: { traffic: { pending: { [daysAgo(6)]: { reason: 'not-published', stores: 0 } } } },
      storeSets: {},
    });
    expect((await runCli(['status', '--state', join(never, STATE), '--max-behind', '6'])).code).toBe(0);
    const result = await runCli(['status', '--state', join(never, STATE), '--max-behind', '5']);
    expect(result.code).toBe(8);
    expect(result.stderr).toContain('traffic (6 days behind, no complete day yet)');
    expect(result.stdout).toContain('none yet');
  });

  it('--format prometheus writes gauges for the textfile collector', async () => {
    const out = await folderWithState({ version: 1, lastCompleteDay: { traffic: daysAgo(3), 'traffic[store=S001]': daysAgo(1) } });
    const result = await runCli(['status', '-o', out, '--format', 'prometheus']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toContain('# TYPE area_metrics_days_behind gauge');
    expect(lines).toContain('area_metrics_days_behind{metric="traffic",key="traffic"} 2');
    expect(lines).toContain('area_metrics_days_behind{metric="traffic",key="traffic[store=S001]"} 0');
    expect(lines).toContain(
      `area_metrics_last_complete_day_timestamp_seconds{metric="traffic",key="traffic"} ${Date.parse(`${daysAgo(3)}T00:00:00Z`) / 1000}`,
    );
    expect(lines).toContain('area_metrics_pending_days{metric="traffic",key="traffic"} 0');
  });

  it('AREA_METRICS_OUTPUT names the folder, like for the import commands', async () => {
    const out = await folderWithState({ version: 1, lastCompleteDay: { traffic: daysAgo(1) } });
    const result = await runCli(['status', '--json'], { env: { AREA_METRICS_OUTPUT: out } });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as StatusJson).metrics.map((metric) => metric.key)).toEqual(['traffic']);
  });

  it.each([
    [undefined, /no state file at .*\.area-metrics-state\.json/],
    [{ version: 1, lastCompleteDay: { traffic: '2026-02-30' } }, /"2026-02-30" is not a valid day/],
    ['not json', /is not valid JSON/],
  ])('a missing or unusable state file (%j) is exit 2 with one line', async (content, message) => {
    const out = content === undefined ? await tempDir() : await folderWithState(content);
    const result = await runCli(['status', '-o', out]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(message)]);
  });

  it('status, accept and reopen read the state on the run\'s clock: days the import recorded on a clock ahead are not "in the future"', async () => {
    // A simulation of the weeks ahead, as the over-months tests run it: every command on the same AREA_METRICS_NOW.
    const ahead = new Date(CLOCK.getTime() + 40 * 86_400_000);
    const dayAhead = (n: number): string => new Date(ahead.getTime() - n * 86_400_000).toISOString().slice(0, 10);
    const onThatClock = { env: { AREA_METRICS_NOW: ahead.toISOString() } };
    const out = await folderWithState({ version: 1, lastCompleteDay: { traffic: dayAhead(2) } });
    const status = await runCli(['status', '-o', out, '--json'], onThatClock);
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as StatusJson).metrics[0]?.lastCompleteDay).toBe(dayAhead(2));
    const reopened = await runCli(['reopen', 'traffic', '-o', out, '--date', dayAhead(2)], onThatClock);
    expect(reopened.code, reopened.stderr).toBe(0);
    const accepted = await runCli(['accept', 'traffic', '-o', out, '--date', dayAhead(2)], onThatClock);
    expect(accepted.code, accepted.stderr).toBe(0);
  });

  it('-o - names no folder: status and accept say to name the state with --state, exit 2, and it is read from there', async () => {
    for (const command of [['status'], ['accept', 'traffic', '--date', daysAgo(2)]]) {
      const result = await runCli([...command, '-o', '-']);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/uses a folder's state; with -o - pass --state <file>$/)]);
    }
    const out = await folderWithState({ version: 1, lastCompleteDay: { traffic: daysAgo(1) } });
    const named = await runCli(['status', '-o', '-', '--state', join(out, '.area-metrics-state.json'), '--json']);
    expect(named.code, named.stderr).toBe(0);
    expect((JSON.parse(named.stdout) as StatusJson).metrics.map((metric) => metric.key)).toEqual(['traffic']);
  });

  it('bad flags are usage errors', async () => {
    const out = await folderWithState({ version: 1, lastCompleteDay: { traffic: daysAgo(1) } });
    expect((await runCli(['status', '-o', out, '--max-behind', 'two'])).code).toBe(2);
    expect((await runCli(['status', '-o', out, '--json', '--format', 'prometheus'])).code).toBe(2);
    expect((await runCli(['status', '-o', out, '--format', 'xml'])).code).toBe(2);
  });
});
