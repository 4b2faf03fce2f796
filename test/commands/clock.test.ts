/**
 * One clock: `AREA_METRICS_NOW` sets the time an import and `accept`/`reopen` read for everything they stamp, not
 * only which days are over, and the day `check` asks for. In this process, against the sandbox on the same clock, years from the system's, so a
 * stamp taken from the system time shows.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clockOf } from '../../src/commands/clock.js';
import { UsageError } from '../../src/errors.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';
import { startLineageServer } from '../helpers/lineage-server.js';
import { clockedCli, clockEnv, daysBefore, useSandbox } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';

const SECRET = 'One-Cl0ck-S3cret';
const CLOCK = new Date('2031-03-04T05:06:07.000Z');
/** The clock of a later command on the same output. */
const LATER = new Date('2031-03-06T17:00:00.000Z');
const DAY = daysBefore(CLOCK)(2);
const tempDir = useTempDirs('one-clock-');
const sandbox = useSandbox({ stores: 2, zones: 2, days: 4, clientId: 'clock-client', clientSecret: SECRET, now: () => CLOCK });

interface Manifest {
  readonly runId: string;
  readonly command: string;
  readonly start: string;
  readonly end: string;
}

async function manifestOf(out: string, seq: number): Promise<Manifest> {
  return JSON.parse(await readFile(join(out, '_runs', `seq-${String(seq).padStart(12, '0')}.json`), 'utf8')) as Manifest;
}

/** The milliseconds a UUIDv7 run id starts with. */
function runIdTime(runId: string): number {
  return Number.parseInt(runId.replace('-', '').slice(0, 12), 16);
}

describe('AREA_METRICS_NOW', () => {
  it("stamps an import's manifest, lineage events and the state's last run, and a later reopen's manifest", async () => {
    const out = await tempDir();
    const lineage = await startLineageServer();
    try {
      const { runCli } = clockedCli(CLOCK, { AREA_METRICS_CLIENT_SECRET: SECRET });
      const args = ['traffic', '--base-url', sandbox().url, '--client-id', 'clock-client', '--date', DAY, '-o', out];
      const imported = await runCli([...args, '--openlineage-url', lineage.url]);
      expect(imported.code, imported.stderr).toBe(0);
      const run = await manifestOf(out, 1);
      expect([run.start, run.end]).toEqual([CLOCK.toISOString(), CLOCK.toISOString()]);
      expect(runIdTime(run.runId)).toBe(CLOCK.getTime());
      expect(lineage.received.map(({ body }) => [body.eventType, body.eventTime])).toEqual([
        ['START', CLOCK.toISOString()],
        ['COMPLETE', CLOCK.toISOString()],
      ]);
      const state = JSON.parse(await readFile(join(out, '.area-metrics-state.json'), 'utf8')) as { lastRun: { time: string } };
      expect(state.lastRun.time).toBe(CLOCK.toISOString());
    } finally {
      await lineage.close();
    }

    const reopened = await clockedCli(LATER).runCli(['reopen', 'traffic', '-o', out, '--date', DAY]);
    expect(reopened.code, reopened.stderr).toBe(0);
    const settlement = await manifestOf(out, 2);
    expect(settlement.command).toMatch(/^reopen traffic /);
    expect([settlement.start, settlement.end]).toEqual([LATER.toISOString(), LATER.toISOString()]);
    expect(runIdTime(settlement.runId)).toBe(LATER.getTime());
  });

  it("decides the day `check` asks for: yesterday of the clock, as an import's", async () => {
    const { runCli } = clockedCli(CLOCK, { AREA_METRICS_CLIENT_SECRET: SECRET });
    const checked = await runCli(['check', '--base-url', sandbox().url, '--client-id', 'clock-client']);
    expect(checked.code, checked.stderr).toBe(0);
    const yesterday = daysBefore(CLOCK)(1);
    const days = checked.stdout
      .trim()
      .split('\n')
      .map((line) => /^OK +(\S+): .* for (\S+)$/.exec(line)?.slice(1, 3).join(' '));
    expect(days).toEqual(METRIC_NAMES.map((metric) => `${metric} ${yesterday}`));
  });

  it('stands still where it is set; unset, it is the system time; anything but an ISO instant is exit 2', async () => {
    const set = clockOf(clockEnv(CLOCK));
    expect([set().toISOString(), set().toISOString()]).toEqual([CLOCK.toISOString(), CLOCK.toISOString()]);
    const before = Date.now();
    const system = clockOf({})().getTime();
    expect(system).toBeGreaterThanOrEqual(before);
    expect(system).toBeLessThanOrEqual(Date.now());
    expect(() => clockOf({ AREA_METRICS_NOW: 'tomorrow' })).toThrow(UsageError);
  });
});
