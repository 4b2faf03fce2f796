import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daysOfRanges } from '../../src/window/day-ranges.js';
import { startCli } from '../helpers/cli.js';
import { deadPid } from '../helpers/pids.js';
import { daysBefore } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';

const tempDir = useTempDirs('state-lock-e2e-');
const STATE = '.area-metrics-state.json';
/** Twelve different days, each over at any hour (a UTC day is over 25 hours after its end; accept refuses one that is not). */
const DAYS = Array.from({ length: 12 }, (_, index) => daysBefore(new Date())(index + 3)).sort();
/**
 * One trial here (twelve processes cost seconds on a busy machine): bench/state-lock.mjs runs twenty, and
 * test/state/storage/file-lock-takeover.test.ts races twelve processes over dead holders many times more cheaply.
 */
const TRIALS = 1;

describe('twelve accepts at once over a lock a killed run left', () => {
  it('records every day, every trial', async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const out = await tempDir();
      await writeFile(join(out, STATE), '{"version":5,"metrics":{},"storeSets":{}}\n');
      await symlink(String(await deadPid()), join(out, `${STATE}.lock`));
      const runs = DAYS.map((day) => startCli(['accept', 'traffic', '--date', day, '-o', out], { process: true, timeoutMs: 60_000 }));
      const results = await Promise.all(runs.map((run) => run.done));
      expect(results.map((result) => result.code)).toEqual(DAYS.map(() => 0));
      const state = JSON.parse(await readFile(join(out, STATE), 'utf8')) as { metrics: { traffic: { accepted: [string, string][] } } };
      expect({ trial, days: daysOfRanges(state.metrics.traffic.accepted) }).toEqual({ trial, days: DAYS });
    }
  }, 120_000);
});
