/**
 * Days judged night after night: the import run in this process with its clock a day later each night, against a
 * sandbox (with its weekly rhythm) whose clock moves with it. A Saturday is judged against Saturdays; a store closed
 * for good is one finding a person settles, not a held day every night; a store at a new size settles by itself once
 * the days after it confirm the level; forty held days never keep the other pending
 * days from being fetched again.
 */
import { cp, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxPublishing } from '../../src/sandbox/types.js';
import { WEEKDAY_WEIGHTS } from '../../src/sandbox/rhythm.js';
import { addDays, daysBetween } from '../../src/window/days.js';
import { clockedCli, daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { latestUnit } from '../helpers/manifests.js';
import { useSharedTempDirs, useTempDirs } from '../helpers/tmp.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const DAY_MS = 86_400_000;
/** The first night's clock: noon, when the day before yesterday is over and yesterday is not. */
const FIRST_NIGHT = noonToday();
let clock = FIRST_NIGHT;
const daysAgo = daysBefore(FIRST_NIGHT);
/** Day `n` of the story: 0 is the first night's day, -1 its yesterday. */
const day = (n: number): string => daysAgo(-n);

const tempDir = useTempDirs('held-nights-');
const sharedDir = useSharedTempDirs('held-nights-history-');

// The sandbox's clock is the night's: which days exist and which local days have ended move with it.
const sandbox = useSandbox({ port: 0, stores: 6, zones: 3, days: 90, serveInProgress: true, now: () => clock });
afterEach(() => {
  clock = FIRST_NIGHT;
});

/**
 * The metric's command line on night `night` (0: the first night; a fraction is hours of it), and its warnings but
 * those of days not over.
 */
async function runNight(night: number, out: string, args: readonly string[], metric = 'unique-users') {
  clock = new Date(FIRST_NIGHT.getTime() + night * DAY_MS);
  const { runCli } = clockedCli(clock, SECRET_ENV);
  const before = sandbox.requests.length;
  const result = await runCli(importArgs(sandbox, metric, out, ...args));
  const warnings = result.stderr.split('\n').filter((line) => line.startsWith('warn: ') && !line.includes('not over until'));
  const fetched = new Set(sandbox.requests.slice(before).flatMap(({ query }) => query.datetime_gte?.slice(0, 10) ?? []));
  return { ...result, warnings, fetched };
}

/** `status` of the folder at the current night's clock: text and JSON. */
async function statusOf(out: string) {
  const { runCli } = clockedCli(clock);
  const text = (await runCli(['status', '-o', out])).stdout;
  const json = JSON.parse((await runCli(['status', '-o', out, '--json'])).stdout) as {
    metrics: {
      suspect: [string, string][];
      accepted: [string, string][];
      pending: { day: string; reason: string; firstStores?: string[]; correction?: true }[];
    }[];
  };
  return { text, metric: json.metrics[0]! };
}

type Distorted = NonNullable<SandboxPublishing['distorted']>;

let history: Promise<string> | undefined;
/**
 * A fresh folder holding five weeks of honest final days through the first night's day before yesterday: imported
 * once on the first night, with no warning, then copied for each test that starts from it.
 */
async function fiveWeeksFinal(): Promise<string> {
  history ??= (async () => {
    const folder = await sharedDir();
    const imported = await runNight(0, folder, ['--from', day(-36), '--to', day(-2)]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.warnings).toEqual([]);
    return folder;
  })();
  const out = await tempDir();
  await cp(await history, out, { recursive: true });
  return out;
}

describe("the week's rhythm", () => {
  it('a Saturday at its usual level is not held; one store at its Tuesday level on a Saturday is, against its Saturdays', async () => {
    const out = await tempDir();
    // The first night on which the day before yesterday is a Saturday.
    const night = (6 - new Date(`${day(-2)}T00:00:00Z`).getUTCDay() + 7) % 7;
    const saturday = day(night - 2);
    const history = await runNight(night, out, ['--from', addDays(saturday, -35), '--to', saturday]);
    expect(history.code, history.stderr).toBe(0);
    expect(history.warnings).toEqual([]);
    // The same Saturday again, S003 at its Tuesday's level (half its Saturday's): a median of every day would not see it.
    const { runCli } = clockedCli(clock);
    expect((await runCli(['reopen', 'unique-users', '--date', saturday, '-o', out])).code).toBe(0);
    const tuesdayLevel = WEEKDAY_WEIGHTS[2]! / WEEKDAY_WEIGHTS[6]!;
    sandbox.setPublishing({ distorted: [{ day: saturday, stores: ['S003'], factor: tuesdayLevel }] });
    const held = await runNight(night, out, ['--date', saturday]);
    expect(held.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: unique-users ${saturday}: suspect: 1 store outside their usual sum of unique_users: S003 [\\d.]+ \\(expected [\\d.]+ to [\\d.]+, its same weekday\\);`,
        ),
      ),
    ]);
    // It was final before `reopen`: its new numbers are held as a correction of it.
    expect(held.warnings[0]).toContain('; a correction of a final day: file rewritten, provisional again and held');
    expect((await statusOf(out)).metric.pending).toMatchObject([{ day: saturday, reason: 'suspect', correction: true }]);
  });
});

describe('a store closed for good, night after night', () => {
  it('is one held day naming the store, not one a night; accept settles it and the nights after are quiet', async () => {
    // Five weeks of honest history, through the first night's day before yesterday.
    const out = await fiveWeeksFinal();
    // S003 reports zeros from the first night's yesterday on, for good.
    const closed = day(-1);
    const zeros: Distorted = daysBetween(closed, day(20)).map((each) => ({ day: each, stores: ['S003'], factor: 0 }));
    sandbox.setPublishing({ distorted: zeros });

    const nights = [];
    for (let night = 0; night < 15; night++) nights.push(await runNight(night, out, ['--catch-up']));
    for (const night of nights) expect(night.code, night.stderr).toBe(0);
    // Night 0 only sees the day not over; night 1 judges it: held, said in full, naming the store and its range.
    expect(nights[0]!.warnings).toEqual([]);
    expect(nights[1]!.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: unique-users ${closed}: suspect: 1 store outside their usual sum of unique_users: S003 0 \\(expected [\\d.]+ to [\\d.]+, its same weekday\\);`,
        ),
      ),
    ]);
    // Every night after: the same held day in one short line, and no other day held (the store's later zeros complete).
    for (const night of nights.slice(2)) {
      expect(night.warnings).toEqual([
        expect.stringMatching(new RegExp(`^warn: unique-users: 1 day still held as suspect \\(${closed}\\): fetched again`)),
      ]);
    }
    const held = await statusOf(out);
    expect(held.metric.suspect).toEqual([[closed, closed]]);
    expect(held.metric.pending.map(({ day: pendingDay, reason }) => [pendingDay, reason])).toEqual([
      [closed, 'suspect'],
      [day(13), 'not-over'],
    ]);
    expect(held.metric.pending[0]).toMatchObject({ firstStores: ['S003'] });
    expect(held.text).toMatch(
      new RegExp(
        `^unique-users .*  ${closed} suspect \\(1 store outside their range: S003\\), ${day(13)} imported before it was over$`,
        'm',
      ),
    );

    // A person settles it: the store closed.
    const { runCli } = clockedCli(clock);
    const accepted = await runCli(['accept', 'unique-users', '--date', closed, '-o', out]);
    expect(accepted.code, accepted.stderr).toBe(0);
    const settled = await statusOf(out);
    expect(settled.metric).toMatchObject({ suspect: [], accepted: [[closed, closed]] });
    expect(settled.text).not.toContain('held:');
    const quiet = await runNight(15, out, ['--catch-up']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.warnings).toEqual([]);
    expect(quiet.fetched).not.toContain(closed);
    expect((await statusOf(out)).metric.pending.map(({ reason }) => reason)).toEqual(['not-over']);
  });
});

describe('a store at a new size for good, night after night', () => {
  it('holds its first day until the days after it confirm the level, then settles it without a person', async () => {
    const out = await fiveWeeksFinal();
    // S005 doubles from the first night's yesterday on (a store enlarged), for good.
    const enlarged = day(-1);
    sandbox.setPublishing({ distorted: daysBetween(enlarged, day(20)).map((each) => ({ day: each, stores: ['S005'], factor: 2 })) });

    const nights = [];
    for (let night = 0; night < 14; night++) nights.push(await runNight(night, out, ['--catch-up']));
    for (const night of nights) expect(night.code, night.stderr).toBe(0);
    expect(nights[1]!.warnings).toEqual([
      expect.stringMatching(new RegExp(`^warn: unique-users ${enlarged}: suspect: 1 store outside .*: S005 `)),
    ]);
    // Held while too few days came after it; then one night says the new level, and the nights after are quiet.
    const settledOn = nights.findIndex((night) => night.stdout.includes('at a new level') || night.stderr.includes('at a new level'));
    // Fetched first each night, it is judged before that night's new day is in: 7 complete days after it on night 9.
    expect(settledOn).toBe(9);
    for (const night of nights.slice(2, settledOn)) expect(night.warnings).toEqual([expect.stringMatching(/1 day still held as suspect/)]);
    expect(nights[settledOn]!.stderr).toMatch(
      new RegExp(`^unique-users ${enlarged}: 1 store \\(S005\\) at a new level from this day on`, 'm'),
    );
    for (const night of nights.slice(settledOn)) expect(night.warnings).toEqual([]);
    const { metric } = await statusOf(out);
    expect(metric.suspect).toEqual([]);
    expect(metric.accepted).toEqual([]);
    expect(metric.pending.map(({ reason }) => reason)).toEqual(['not-over']);
  });
});

describe('forty held days', () => {
  /** The state after a first night: 40 days held (every value zero), one unpublished, one partly published, one not over. */
  async function fortyHeld() {
    const out = await tempDir();
    const held = daysBetween(day(-45), day(-6));
    const unpublished = day(-5);
    const partly = day(-2);
    sandbox.setPublishing({
      distorted: held.map((each) => ({ day: each, factor: 0 })),
      hidden: [{ day: unpublished }, { day: partly, stores: ['S002'] }],
    });
    const first = await runNight(0, out, ['--from', held[0]!, '--to', day(-1)]);
    expect(first.code, first.stderr).toBe(0);
    const { metric } = await statusOf(out);
    expect(metric.suspect).toEqual([[held[0], held.at(-1)]]);
    expect(metric.pending.filter(({ reason }) => reason !== 'suspect').map(({ day: pendingDay, reason }) => [pendingDay, reason])).toEqual([
      [unpublished, 'not-published'],
      [partly, 'partly-published'],
      [day(-1), 'not-over'],
    ]);
    // The vendor publishes the missing day and store; the held days stay wrong.
    sandbox.setPublishing({ distorted: held.map((each) => ({ day: each, factor: 0 })) });
    return { out, held, others: [unpublished, partly, day(-1)] };
  }

  it('never keep a pending day of another reason from being fetched, and are fetched again at most 7 a night, in turns, in one line', async () => {
    const { out, held, others } = await fortyHeld();
    const seen = new Set<string>();
    for (const night of [1, 2]) {
      const run = await runNight(night, out, ['--catch-up', '--max-days', '31']);
      expect(run.code, run.stderr).toBe(0);
      const heldFetched = held.filter((each) => run.fetched.has(each));
      expect(heldFetched).toHaveLength(7);
      for (const each of heldFetched) seen.add(each);
      if (night === 1) {
        // The other pending days first: fetched, and final now.
        for (const other of others) expect(run.fetched).toContain(other);
        const { metric } = await statusOf(out);
        expect(
          metric.pending.filter(({ reason }) => reason !== 'suspect').map(({ day: pendingDay, reason }) => [pendingDay, reason]),
        ).toEqual([[day(0), 'not-over']]);
      }
      // The days fetched again and still wrong: one line with their count, not a warning each.
      expect(run.warnings).toEqual([
        `warn: unique-users: 7 days still held as suspect (${heldFetched.slice(0, 3).join(', ')} and 4 more): ` +
          'fetched again, the numbers still look wrong; `area-metrics status` names their stores, `area-metrics accept` settles a day whose numbers are right',
      ]);
    }
    // The second night took the next held days in turn.
    expect(seen.size).toBe(14);
    expect((await statusOf(out)).metric.suspect).toEqual([[held[0], held.at(-1)]]);
  });

  it('take only the room --max-days leaves after the other pending days', async () => {
    const { out, held, others } = await fortyHeld();
    const run = await runNight(1, out, ['--catch-up', '--max-days', '4']);
    expect(run.code, run.stderr).toBe(0);
    for (const other of others) expect(run.fetched).toContain(other);
    expect(held.filter((each) => run.fetched.has(each))).toHaveLength(1);
  });
});

describe('accept of a day not over', () => {
  it('at 09:00Z, of yesterday, is refused (exit 2, saying when it will be over), and nothing changes', async () => {
    const out = await tempDir();
    // 09:00Z: yesterday's window holds local days that have not ended (it is over at 00:59:59Z tomorrow).
    const morning = await runNight(-3 / 24, out, ['--date', day(-1)]);
    expect(morning.code, morning.stderr).toBe(0);
    expect((await statusOf(out)).metric.pending).toMatchObject([{ day: day(-1), reason: 'not-over' }]);
    const before = await folderOf(out);
    const { runCli } = clockedCli(clock);
    const accepted = await runCli(['accept', 'unique-users', '--date', day(-1), '-o', out]);
    expect(accepted.code).toBe(2);
    expect(accepted.stdout).toBe('');
    expect(accepted.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`${day(-1)}: not over until ${day(1)}T00:59:59Z, .*nothing accepted`)),
    ]);
    expect(await folderOf(out)).toEqual(before);
    // A day pending for another reason is accepted as before.
    const older = await runCli(['accept', 'unique-users', '--date', day(-3), '-o', out]);
    expect(older.code, older.stderr).toBe(0);
  });
});

describe("a vendor's correction of a final day, met by --lookback", () => {
  /** Five weeks of final days through day(-2), then the vendor's new numbers for day(-2), fetched again on night 1. */
  async function corrected(distorted: Distorted) {
    const out = await fiveWeeksFinal();
    sandbox.setPublishing({ distorted });
    const night = await runNight(1, out, ['--catch-up', '--lookback', '2']);
    expect(night.code, night.stderr).toBe(0);
    expect(night.fetched).toContain(day(-2));
    return { out, night, unit: await latestUnit(out, 'unique-users', day(-2)) };
  }

  it('that zeroes a store is held: one warning, provisional in the manifest, named in status; accept settles it', async () => {
    const { out, night, unit } = await corrected([{ day: day(-2), stores: ['S005'], factor: 0 }]);
    expect(night.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warn: unique-users ${day(-2)}: suspect: 1 store outside .*: S005 0 .*; a correction of a final day: file rewritten, provisional again and held`,
        ),
      ),
    ]);
    expect(unit).toMatchObject({ status: 'provisional', reason: 'suspect', correction: true, changed: true });
    const held = await statusOf(out);
    expect(held.metric.suspect).toEqual([[day(-2), day(-2)]]);
    expect(held.metric.pending.find(({ day: pendingDay }) => pendingDay === day(-2))).toMatchObject({
      reason: 'suspect',
      correction: true,
    });
    expect(held.text).toContain(`${day(-2)} suspect (a correction of a final day: 1 store outside their range: S005)`);
    const { runCli } = clockedCli(clock);
    expect((await runCli(['status', '-o', out, '--max-behind', '1'])).code).toBe(8);
    const accepted = await runCli(['accept', 'unique-users', '--date', day(-2), '-o', out]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(await latestUnit(out, 'unique-users', day(-2))).toMatchObject({ status: 'final', finalized: true });
    expect((await statusOf(out)).metric).toMatchObject({ suspect: [], accepted: [[day(-2), day(-2)]] });
  });

  it("that is held settles by the vendor's next numbers: an info line, final again", async () => {
    const { out } = await corrected([{ day: day(-2), stores: ['S005'], factor: 0 }]);
    sandbox.setPublishing({});
    const next = await runNight(2, out, ['--catch-up']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.fetched).toContain(day(-2));
    expect(next.warnings).toEqual([]);
    expect(next.stderr).toMatch(
      new RegExp(
        `^unique-users ${day(-2)}: held as suspect \\(a correction\\) before; fetched again, its numbers now look right: recorded complete$`,
        'm',
      ),
    );
    expect(await latestUnit(out, 'unique-users', day(-2))).toMatchObject({ status: 'final', finalized: true });
    expect((await statusOf(out)).metric.suspect).toEqual([]);
  });

  it('that looks plausible is final and changed, as before, and quiet', async () => {
    const { out, night, unit } = await corrected([{ day: day(-2), stores: ['S005'], factor: 1.2 }]);
    expect(night.warnings).toEqual([]);
    expect(unit).toMatchObject({ status: 'final', changed: true });
    expect(unit?.reason).toBeUndefined();
    expect((await statusOf(out)).metric.suspect).toEqual([]);
    // The next night's look-back finds it as recorded: nothing to judge again.
    const next = await runNight(2, out, ['--catch-up', '--lookback', '3']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.warnings).toEqual([]);
    expect(await latestUnit(out, 'unique-users', day(-2))).toMatchObject({ status: 'final', changed: false });
  });
});

describe('a store closed every Sunday', () => {
  /** Ten weeks of days, S003 at zero every Sunday, imported in one run; then a night of --catch-up. */
  async function tenWeeks(storeArgs: readonly string[]) {
    const out = await tempDir();
    const days = daysBetween(day(-71), day(-2));
    const sundays = days.filter((each) => new Date(`${each}T00:00:00Z`).getUTCDay() === 0);
    sandbox.setPublishing({
      distorted: [...sundays, day(-1), day(0)]
        .filter((each) => new Date(`${each}T00:00:00Z`).getUTCDay() === 0)
        .map((each) => ({ day: each, stores: ['S003'], factor: 0 })),
    });
    const backfill = await runNight(0, out, ['--from', days[0]!, '--to', days.at(-1)!, ...storeArgs]);
    expect(backfill.code, backfill.stderr).toBe(0);
    const held = (await statusOf(out)).metric.suspect.flatMap(([first, last]) => daysBetween(first, last));
    const night = await runNight(1, out, ['--catch-up', ...storeArgs]);
    expect(night.code, night.stderr).toBe(0);
    return { out, sundays, held, backfill, night };
  }

  for (const [name, storeArgs] of [
    ['every store', []],
    ['--store S003 alone', ['--store', 'S003']],
  ] as const) {
    it(`holds nothing after its first weeks (${name}); the nights after settle those by themselves`, async () => {
      const { out, sundays, held, night } = await tenWeeks(storeArgs);
      // At most its first two Sundays: from then on, its Sundays before show its rhythm.
      expect(held.length).toBeLessThanOrEqual(2);
      for (const each of held) expect(sundays.slice(0, 2)).toContain(each);
      // Fetched again, the held Sundays now have later Sundays showing the rhythm: complete, said in an info line.
      for (const each of held)
        expect(night.stderr).toMatch(new RegExp(`^unique-users ${each}: held as suspect before; .*now look right`, 'm'));
      expect(night.warnings).toEqual([]);
      expect((await statusOf(out)).metric.suspect).toEqual([]);
      const { runCli } = clockedCli(clock);
      const status = await runCli(['status', '-o', out, '--max-behind', '1']);
      expect(status.code, status.stdout).toBe(0);
    });
  }
});

describe('a half day', () => {
  it('is one warning line per metric, naming how many stores, not a line per store', async () => {
    const out = await tempDir();
    const history = await runNight(0, out, ['--from', day(-36), '--to', day(-2)], 'all');
    expect(history.code, history.stderr).toBe(0);
    sandbox.setPublishing({ distorted: [{ day: day(-1), factor: 0.5 }] });
    const night = await runNight(1, out, ['--catch-up'], 'all');
    expect(night.code, night.stderr).toBe(0);
    // Each metric's held day; for traffic, before it, one line for its six results whose zones no longer sum to 1.
    expect(night.warnings.map((line) => line.slice(0, line.indexOf(':', 6)))).toEqual(
      ['unique-users', 'avg-screen-time', 'traffic', 'traffic'].map((metric) => `warn: ${metric} ${day(-1)}`),
    );
    expect(night.warnings[2]).toMatch(
      /^warn: traffic \S+: 6 results warned of: store S\d+ \S+: traffic_pct values sum to 0\.5\d+, not 1; .*; and 3 more$/,
    );
    expect(night.warnings.filter((line) => /^warn: \S+ \S+: suspect: 6 (of 6 )?stores/.test(line))).toHaveLength(3);
  });
});

/** Every file of an output folder and its bytes, for "nothing changed". */
async function folderOf(out: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(out, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path] = await readFile(path, 'base64');
  }
  return files;
}
