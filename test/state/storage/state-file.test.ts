import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { useTempDirs } from '../../helpers/tmp.js';
import { loadStateFile } from '../../helpers/state-file.js';
import { METRIC_NAMES } from '../../../src/metrics/names.js';

const tempDir = useTempDirs('state-file-');
const OPTIONS = { now: new Date('2026-11-21T02:30:00Z'), metricNames: METRIC_NAMES };
let path: string;
beforeEach(async () => {
  path = join(await tempDir(), '.area-metrics-state.json');
});

async function onDisk(): Promise<{ version: number; metrics: Record<string, Record<string, unknown>> }> {
  return JSON.parse(await readFile(path, 'utf8')) as never;
}

describe('the state file of each release', () => {
  it('reads version 1 and 2 files of earlier releases and upgrades them on the next write', async () => {
    await writeFile(
      path,
      JSON.stringify({ version: 1, lastCompleteDay: { traffic: '2026-11-18', 'unique-users[store=S001]': '2026-11-17' } }),
    );
    const state = await loadStateFile(path, OPTIONS);
    expect(state.lastCompleteDay('traffic')).toBe('2026-11-18');
    expect(state.lastCompleteDay('unique-users[store=S001]')).toBe('2026-11-17');
    expect(state.storeCodes('traffic')).toBeUndefined();
    await state.markComplete('traffic', '2026-11-19', ['S001']);
    const file = await onDisk();
    expect(file.version).toBe(5);
    expect(file.metrics['unique-users[store=S001]']).toEqual({ complete: [['2026-11-17', '2026-11-17']] });
    expect(file.metrics.traffic).toMatchObject({ complete: [['2026-11-18', '2026-11-19']], stores: 1 });

    await writeFile(
      path,
      JSON.stringify({
        version: 2,
        metrics: {
          traffic: { lastCompleteDay: '2026-11-17', pending: { '2026-11-18': { reason: 'partial', missingStores: 2, stores: 2 } } },
        },
        storeSets: {},
      }),
    );
    const v2 = await loadStateFile(path, OPTIONS);
    expect(v2.coverage('traffic')).toMatchObject({
      complete: [['2026-11-17', '2026-11-17']],
      pending: [{ day: '2026-11-18', status: { reason: 'partly-published', missingStores: 2, stores: 2 } }],
    });
  });

  it('reads version 4, which had no store figures, and writes version 5 with the figures of the next day judged', async () => {
    await writeFile(
      path,
      JSON.stringify({
        version: 4,
        metrics: { traffic: { complete: [['2026-11-16', '2026-11-17']], profiles: { '2026-11-17': [2, 2, 4, 1] } } },
        storeSets: {},
      }),
    );
    const state = await loadStateFile(path, OPTIONS);
    expect(state.storeHistory('traffic')('2026-11-17')).toBeUndefined();
    await state.markComplete('traffic', '2026-11-18', ['S001', 'S002'], [2, 2, 4, 1], {
      codes: ['S001', 'S002'],
      values: Float64Array.of(1, 0.5),
      suspect: false,
    });
    const file = await onDisk();
    expect(file.version).toBe(5);
    expect(Object.keys(file.metrics.traffic?.storeFigures as object)).toEqual(['2026-11-18']);
    expect([...(state.storeHistory('traffic')('2026-11-18')?.values ?? [])]).toEqual([1, 0.5]);
  });

  it('reads version 3, whose `interrupted` was written before the first request, as `asked`', async () => {
    await writeFile(
      path,
      JSON.stringify({
        version: 3,
        metrics: {
          traffic: {
            complete: [['2026-11-16', '2026-11-17']],
            pending: { '2026-11-18': { reason: 'interrupted' }, '2026-11-19': { reason: 'not-over', stores: 2 } },
          },
        },
        storeSets: {},
        lastRun: { time: '2026-11-20T04:30:00.000Z', command: 'traffic --catch-up', exitCode: 130, rows: {} },
      }),
    );
    const state = await loadStateFile(path, OPTIONS);
    expect(state.coverage('traffic').pending).toEqual([
      { day: '2026-11-18', status: { reason: 'asked' } },
      { day: '2026-11-19', status: { reason: 'not-over', stores: 2 } },
    ]);
    expect(state.lastRun()).toMatchObject({ exitCode: 130 });
    await state.markComplete('traffic', '2026-11-19', ['S001', 'S002']);
    const file = await onDisk();
    expect(file.version).toBe(5);
    expect(file.metrics.traffic).toMatchObject({
      complete: [
        ['2026-11-16', '2026-11-17'],
        ['2026-11-19', '2026-11-19'],
      ],
      pending: { '2026-11-18': { reason: 'asked' } },
    });
  });

  it.each([
    [{ lastCompleteDay: { traffic: '2026-02-30' } }, /traffic lastCompleteDay "2026-02-30" is not a valid day/],
    [{ version: 1, lastCompleteDay: { traffic: '2026-13-01' } }, /traffic lastCompleteDay "2026-13-01" is not a valid day/],
    [
      { version: 1, lastCompleteDay: { traffic: '2099-01-01' } },
      /traffic complete 2099-01-01 is in the future \(today is 2026-11-21 UTC\)/,
    ],
    // Today is not over, so it cannot be complete.
    [{ version: 1, lastCompleteDay: { traffic: '2026-11-21' } }, /traffic complete 2026-11-21 is in the future/],
    [
      { version: 3, metrics: { traffic: { accepted: [['2026-11-05', '2026-11-03']] } }, storeSets: {} },
      /traffic accepted range 2026-11-05..2026-11-03 ends before it starts/,
    ],
    [
      { version: 3, metrics: { traffic: { givenUp: [['2026-11-05', '2026-11-32']] } }, storeSets: {} },
      /traffic givenUp "2026-11-32" is not a valid day/,
    ],
    [
      { version: 3, metrics: { traffic: { pending: { '2026-11-05': { reason: 'lost' } } } }, storeSets: {} },
      /not an area-metrics state file: metrics.traffic.pending.2026-11-05.reason/,
    ],
    [{ version: 1, lastCompleteDay: { trafic: '2026-11-01' } }, /unknown metric key "trafic"/],
    [{ version: 6, metrics: {} }, /has version 6, newer than this area-metrics reads \(5\); upgrade area-metrics/],
    [
      { version: 5, metrics: { traffic: { pending: { '2026-11-05': { reason: 'lost' } } } }, storeSets: {} },
      /not an area-metrics state file: metrics.traffic.pending.2026-11-05.reason/,
    ],
    [
      { version: 2, metrics: { traffic: { lastCompleteDay: '2026-11-01', storeSet: 'abc' } }, storeSets: {} },
      /names store set "abc", which is not in storeSets/,
    ],
    [
      { version: 2, metrics: { traffic: { pending: { '2026-11-31': { reason: 'not-over' } } } }, storeSets: {} },
      /pending day "2026-11-31" is not a valid day/,
    ],
    [{ version: 1, lastCompleteDay: { traffic: 'yesterday' } }, /"yesterday" is not a valid day/],
  ])('refuses %j with a usage error naming the file and the value', async (content, message) => {
    await writeFile(path, JSON.stringify(content));
    const error = await loadStateFile(path, OPTIONS).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).not.toContain('\n');
  });

  it('refuses a file that is not JSON or not a state file', async () => {
    await writeFile(path, 'not json');
    await expect(loadStateFile(path, OPTIONS)).rejects.toThrow(/not valid JSON; fix or delete it/);
    await writeFile(path, '{"hello": 1}');
    await expect(loadStateFile(path, OPTIONS)).rejects.toThrow(/is not an area-metrics state file/);
  });
});

describe('a last run record no number can make the coverage unreadable with', () => {
  const coverage = { traffic: { complete: [['2026-11-16', '2026-11-17']] } };
  const run = { time: '2026-11-20T04:30:00.000Z', command: 'traffic --catch-up', exitCode: 0, rows: { traffic: 3 } };

  it.each([
    [{ ...run, paceRps: 0 }, /lastRun\.paceRps: /],
    [{ ...run, requests: -1 }, /lastRun\.requests: /],
    [{ ...run, time: 'yesterday' }, /lastRun\.time "yesterday" is not a date-time/],
    [{ ...run, surprise: true }, /lastRun: /],
    ['broken', /lastRun: /],
  ])(
    'reads a state whose last run is %j: the coverage kept, one warning, and the next write leaves the record out',
    async (lastRun, warning) => {
      await writeFile(path, JSON.stringify({ version: 5, metrics: coverage, storeSets: {}, lastRun }));
      const state = await loadStateFile(path, OPTIONS);
      expect(state.coverage('traffic').complete).toEqual([['2026-11-16', '2026-11-17']]);
      expect(state.lastRun()).toBeUndefined();
      expect(state.warnings).toHaveLength(1);
      expect(state.warnings[0]).toMatch(warning);
      expect(state.warnings[0]).toContain(path);
      await state.markComplete('traffic', '2026-11-18', ['S001']);
      const file = (await onDisk()) as unknown as Record<string, unknown>;
      expect(file.lastRun).toBeUndefined();
      expect((await loadStateFile(path, OPTIONS)).warnings).toEqual([]);
    },
  );

  it('never writes a count the reader would refuse: a pace of 0 is left out, the rest of the run recorded', async () => {
    const state = await loadStateFile(path, OPTIONS);
    await state.recordRun({ ...run, requests: 4, throttled: 1, paceRps: 0 });
    const reread = await loadStateFile(path, OPTIONS);
    expect(reread.warnings).toEqual([]);
    expect(reread.lastRun()).toEqual({ ...run, requests: 4, throttled: 1 });
  });
});
