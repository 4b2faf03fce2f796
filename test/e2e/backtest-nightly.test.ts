/**
 * The backtest's figures are the nightly imports': nights of `--catch-up` run with the clock a day later each night
 * against a sandbox whose clock moves with it (one store gone dark on one day, so a day is held), then the backtest
 * of the same folder. Each day both judged final has the same store figures and the same day profile in both states,
 * the same day is held, and the backtest names the store the night's warning named.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStoredUnits } from '../../src/destination/open.js';
import { outputDays } from '../../src/backtest/output-days.js';
import { replayMetrics } from '../../src/backtest/replay.js';
import { DESCRIPTORS } from '../../src/metrics/descriptors.js';
import { destinationSpec } from '../../src/destination/spec.js';
import { ObjectStores } from '../../src/destination/object-stores.js';
import { ImportState } from '../../src/state/import-state.js';
import { FileStateStorage } from '../../src/state/storage/storage.js';
import { silentLogger } from '../../src/log/logger.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';
import { clockedCli, daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';

const DAY_MS = 86_400_000;
const FIRST_NIGHT = noonToday();
let clock = FIRST_NIGHT;
const day = (n: number): string => daysBefore(FIRST_NIGHT)(-n);
const sandbox = useSandbox({ stores: 8, zones: 3, days: 60, seed: 481, serveInProgress: true, now: () => clock });
const tempDir = useTempDirs('backtest-nightly-');

async function runNight(night: number, out: string, args: readonly string[]) {
  clock = new Date(FIRST_NIGHT.getTime() + night * DAY_MS);
  const { runCli } = clockedCli(clock, SECRET_ENV);
  return runCli(importArgs(sandbox, 'all', out, ...args), { timeoutMs: 60_000 });
}

describe('backtest against the nightly imports of the same days', { timeout: 240_000 }, () => {
  it('records the same figures and profiles, and holds the same day naming the same store', async () => {
    const out = await tempDir();
    const history = await runNight(0, out, ['--from', day(-36), '--to', day(-2)]);
    expect(history.code, history.stderr).toBe(0);
    const dark = day(2);
    sandbox.setPublishing({ distorted: [{ day: dark, stores: ['S004'], factor: 0 }] });
    for (let night = 0; night < 8; night++) {
      const result = await runNight(night, out, ['--catch-up']);
      expect(result.code, result.stderr).toBe(0);
      if (night === 4) expect(result.stderr).toMatch(new RegExp(`warn: unique-users ${dark}: suspect: 1 store .*: S004 0 `));
    }
    const nightly = await ImportState.loadExisting(new FileStateStorage(join(out, '.area-metrics-state.json')), {
      now: clock,
      metricNames: METRIC_NAMES,
    });
    const stores = new ObjectStores({ env: {}, forcePathStyle: false, retries: 0, timeoutMs: 1000, logger: silentLogger });
    const stored = openStoredUnits(
      destinationSpec(out, '-o'),
      { layout: nightly.layout, mode: nightly.dayMode },
      {
        stores,
        database: { env: {}, retries: 0, logger: silentLogger },
      },
    );
    const replays = await replayMetrics({ metrics: DESCRIPTORS, mode: nightly.dayMode, ...outputDays(stored, {}) });
    for (const replay of replays) {
      const key = replay.metric;
      const final = replay.days.filter((each) => nightly.isFinal(key, each));
      // 35 days of history and the 7 days over by the last night, every one final but the held one.
      expect(final.length).toBe(35 + 7 - 1);
      const figures = (state: ImportState) => {
        const history = state.storeHistory(key);
        return final.map((each) => {
          const found = history(each);
          return { day: each, codes: found?.codes, values: found === undefined ? undefined : [...found.values] };
        });
      };
      expect(figures(replay.state)).toEqual(figures(nightly));
      const profiles = (state: ImportState) => final.map((each) => [each, state.completeProfiles(key).get(each)]);
      expect(profiles(replay.state)).toEqual(profiles(nightly));
      const heldNightly = nightly
        .coverage(key)
        .pending.flatMap(({ day: pending, status }) => (status.reason === 'suspect' ? [pending] : []));
      expect({ key, held: replay.stillHeld }).toEqual({ key, held: heldNightly });
    }
    const users = replays.find(({ metric }) => metric === 'unique-users')!;
    expect(users.held.map(({ day: held, stores: named }) => ({ held, named }))).toEqual([{ held: dark, named: ['S004'] }]);
  });
});
