/**
 * A store closed every Sunday, in a backtest of what real imports wrote: the sandbox publishes S003 at zero each
 * Sunday, ten weeks of it are imported (every store, and `--store S003` alone, a file per store), and the
 * backtest of the folder holds at most its first two Sundays (before its history shows the rhythm), nothing after,
 * and nothing is still held at the end: the weeks after settle those, as the nightly imports settle them.
 */
import { describe, expect, it } from 'vitest';
import { daysBetween } from '../../src/window/days.js';
import { backtestJson } from '../helpers/backtest.js';
import { useStoppedSandbox } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';
import { importArgs } from '../helpers/vendor.js';

const { daysAgo, sandbox, runCli } = useStoppedSandbox({ stores: 6, zones: 3, days: 90, seed: 482 });
const tempDir = useTempDirs('backtest-closed-');

// Real imports and replays of ten weeks: a minute on a busy shared machine, not the default half minute.
describe('backtest of a store closed every Sunday', { timeout: 240_000 }, () => {
  it.each([
    { name: 'every store', storeArgs: [] },
    { name: '--store S003 alone', storeArgs: ['--store', 'S003'] },
  ])('$name: at most its first two Sundays held, none after, none still held', async ({ storeArgs }) => {
    const out = await tempDir();
    const days = daysBetween(daysAgo(71), daysAgo(2));
    const sundays = days.filter((each) => new Date(`${each}T00:00:00Z`).getUTCDay() === 0);
    expect(sundays).toHaveLength(10);
    sandbox.setPublishing({ distorted: sundays.map((each) => ({ day: each, stores: ['S003'], factor: 0 })) });
    const imported = await runCli(importArgs(sandbox, 'unique-users', out, '--from', days[0]!, '--to', days.at(-1)!, ...storeArgs), {
      timeoutMs: 120_000,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const [metric] = (await backtestJson(runCli, ['unique-users', '-o', out], { timeoutMs: 120_000 })).metrics;
    expect(metric?.nights).toBe(days.length);
    const held = metric?.held ?? [];
    expect(held.length).toBeLessThanOrEqual(2);
    for (const each of held) {
      expect(sundays.slice(0, 2)).toContain(each.day);
      // S003 named among every store; its key alone is every value zero, a whole day's suspicion.
      if (storeArgs.length === 0) expect(each.stores).toEqual(['S003']);
      else expect(each).toMatchObject({ stores: [], why: expect.stringMatching(/^every value zero/) });
    }
    expect(metric?.stillHeld).toEqual([]);
  });
});
