import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';
import { errorLines, waitUntil } from '../helpers/cli.js';
import { InterruptedError } from '../../src/errors.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { allPages, dayParams, metricUrl, NOW, YESTERDAY } from './helpers.js';

const DAY_BEFORE = '2026-11-20';
let sandbox: Sandbox | undefined;

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function start(): Promise<Sandbox> {
  sandbox = await startSandbox({ stores: 5, zones: 3, days: 5, now: () => NOW });
  return sandbox;
}

async function served(
  box: Sandbox,
  metric: string,
  day: string,
  pageSize = '2',
): Promise<{ count: number; stores: string[]; results: unknown[] }> {
  const pages = await allPages(box, metricUrl(box, metric, dayParams(day, { page_size: pageSize })));
  const results = pages.flatMap((page) => page.results);
  return { count: pages[0]!.count, stores: results.map((result) => result.store_code).sort(), results };
}

async function post(box: Sandbox, body: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${box.url}/_sandbox/publishing`, { method: 'POST', body });
  return { status: response.status, body: await response.json() };
}

describe('sandbox publishing rules', () => {
  it('hides a whole window, or some stores of it, over every page; publishing later brings them back', async () => {
    const box = await start();
    const all = await served(box, 'traffic', YESTERDAY);
    expect(all.count).toBe(5);

    box.setPublishing({ hidden: [{ day: YESTERDAY }, { day: DAY_BEFORE, stores: ['S002', 'S004'] }] });
    expect(await served(box, 'traffic', YESTERDAY)).toMatchObject({ count: 0, stores: [] });
    expect(await served(box, 'traffic', DAY_BEFORE)).toMatchObject({ count: 3, stores: ['S001', 'S003', 'S005'] });
    // With a store filter too.
    const one = await allPages(box, metricUrl(box, 'traffic', dayParams(DAY_BEFORE, { store_code: 'S002' })));
    expect(one[0]!.count).toBe(0);
    expect(box.results('traffic', { gte: `${DAY_BEFORE}T00:00:00Z`, lte: `${DAY_BEFORE}T23:59:59Z` })).toHaveLength(3);

    box.setPublishing({});
    expect(await served(box, 'traffic', YESTERDAY)).toEqual(all);
  });

  it('a correction changes the values of that day only, keeps stores and zones, and is deterministic per revision', async () => {
    const box = await start();
    const original = await served(box, 'unique-users', DAY_BEFORE);
    const untouched = await served(box, 'unique-users', YESTERDAY);
    box.setPublishing({ corrected: [{ day: DAY_BEFORE, revision: 1 }] });
    const corrected = await served(box, 'unique-users', DAY_BEFORE);
    expect(corrected.stores).toEqual(original.stores);
    expect(corrected.results).not.toEqual(original.results);
    const zones = (results: unknown[]): unknown =>
      (results as { values: { zone: string }[] }[]).map((result) => result.values.map((value) => value.zone));
    expect(zones(corrected.results)).toEqual(zones(original.results));
    expect(await served(box, 'unique-users', YESTERDAY)).toEqual(untouched);
    box.setPublishing({ corrected: [{ day: DAY_BEFORE, revision: 2 }] });
    expect((await served(box, 'unique-users', DAY_BEFORE)).results).not.toEqual(corrected.results);
    box.setPublishing({ corrected: [{ day: DAY_BEFORE, revision: 1 }] });
    expect((await served(box, 'unique-users', DAY_BEFORE)).results).toEqual(corrected.results);
  });

  it("a distortion scales a day's values (0: every value zero), keeps them valid, and goes when the rule does", async () => {
    const box = await start();
    const values = (results: unknown[], key: string): number[] =>
      (results as { values: Record<string, string | number>[] }[]).flatMap((result) =>
        result.values.map((value) => (key === 'avg_screen_time' ? Date.parse(`1970-01-01T${value[key]}Z`) / 1000 : Number(value[key]))),
      );
    const original = await served(box, 'unique-users', DAY_BEFORE);
    const untouched = await served(box, 'unique-users', YESTERDAY);
    box.setPublishing({
      distorted: [
        { day: DAY_BEFORE, factor: 0.1 },
        { day: DAY_BEFORE, stores: ['S002'], factor: 0 },
      ],
    });
    const tenth = await served(box, 'unique-users', DAY_BEFORE);
    expect(tenth.stores).toEqual(original.stores);
    const byStore = (results: unknown[]) => new Map((results as { store_code: string }[]).map((result) => [result.store_code, [result]]));
    const before = byStore(original.results);
    for (const [store, [result]] of byStore(tenth.results)) {
      const expected = values(before.get(store)!, 'unique_users').map((users) => (store === 'S002' ? 0 : Math.round(users * 0.1)));
      expect(values([result], 'unique_users'), store).toEqual(expected);
    }
    expect(await served(box, 'unique-users', YESTERDAY)).toEqual(untouched);

    box.setPublishing({ distorted: [{ day: DAY_BEFORE, factor: 0, metrics: ['traffic', 'avg-screen-time'] }] });
    expect(await served(box, 'unique-users', DAY_BEFORE)).toEqual(original);
    expect(values((await served(box, 'traffic', DAY_BEFORE)).results, 'traffic_pct').every((share) => share === 0)).toBe(true);
    expect(values((await served(box, 'avg-screen-time', DAY_BEFORE)).results, 'avg_screen_time').every((seconds) => seconds === 0)).toBe(
      true,
    );
    box.setPublishing({ distorted: [{ day: DAY_BEFORE, factor: 1000 }] });
    const shares = values((await served(box, 'traffic', DAY_BEFORE)).results, 'traffic_pct');
    expect(shares.every((share) => share >= 0 && share <= 1)).toBe(true);
    expect(box.results('unique-users', { gte: `${DAY_BEFORE}T00:00:00Z`, lte: `${DAY_BEFORE}T23:59:59Z` })).not.toEqual(original.results);

    box.setPublishing({});
    expect(await served(box, 'unique-users', DAY_BEFORE)).toEqual(original);
  });

  it('the loopback control endpoint sets and shows the rules, and refuses bad ones with 400', async () => {
    const box = await start();
    const rules = { hidden: [{ day: YESTERDAY, stores: ['S001'] }], corrected: [{ day: DAY_BEFORE, revision: 3 }] };
    expect(await post(box, JSON.stringify(rules))).toEqual({ status: 200, body: { publishing: rules } });
    expect(box.publishing()).toEqual(rules);
    expect(await (await fetch(`${box.url}/_sandbox/publishing`)).json()).toEqual({ publishing: rules });
    expect((await served(box, 'traffic', YESTERDAY)).count).toBe(4);
    for (const bad of [
      '{"hidden": [{"day": "2026-02-30"}]}',
      '{"hidden": [{"day": "2026-11-20", "stores": []}]}',
      '{"corrected": [{"day": "2026-11-20"}]}',
      '{"distorted": [{"day": "2026-11-20", "factor": -1}]}',
      '{"later": true}',
      'nope',
    ]) {
      const answer = await post(box, bad);
      expect(answer.status, bad).toBe(400);
    }
    expect(box.publishing()).toEqual(rules);
    expect(await post(box, '')).toEqual({ status: 200, body: { publishing: {} } });
  });
});

describe('sandbox command publishing flags', () => {
  class Collector extends Writable {
    text = '';
    override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
      this.text += chunk.toString();
      callback();
    }
  }

  function run(args: string[]): Promise<{ code: number; stdout: string; errors: string[] }> {
    const stdout = new Collector();
    const stderr = new Collector();
    const controller = new AbortController();
    controller.abort(new InterruptedError('SIGINT')); // starts, prints its banner, and stops at once
    return runCli(['sandbox', '--port', '0', ...args], {
      stdout,
      stderr,
      env: {},
      signal: controller.signal,
    }).then((code) => ({ code, stdout: stdout.text, errors: errorLines(stderr.text) }));
  }

  /** The banner's `publishing:` line of a sandbox started with `args`, which must start it (exit 0). */
  async function publishingBanner(args: string[]): Promise<unknown> {
    const result = await run(args);
    expect(result.code, result.errors.join('\n')).toBe(0);
    const line = result.stdout.split('\n').find((text) => text.startsWith('publishing:'));
    return JSON.parse(line!.slice('publishing:'.length));
  }

  /** `flag` given once for each value. */
  const repeated = (flag: string, ...values: string[]): string[] => values.flatMap((value) => [flag, value]);

  it('--hide-day and --correct-day are repeatable and shown in the banner', async () => {
    const args = [
      ...repeated('--hide-day', '2026-11-20', '2026-11-19:S001,S003'),
      ...repeated('--correct-day', '2026-11-18', '2026-11-17:4'),
    ];
    expect(await publishingBanner([...args, '--publish-after', '5'])).toEqual({
      hidden: [{ day: '2026-11-20' }, { day: '2026-11-19', stores: ['S001', 'S003'] }],
      corrected: [
        { day: '2026-11-18', revision: 1 },
        { day: '2026-11-17', revision: 4 },
      ],
    });
  });

  it('--distort-day is repeatable, with a factor and optionally stores, and shown in the banner', async () => {
    const args = repeated('--distort-day', '2026-11-20:0', 'traffic@2026-11-19:0.1:S001,S003', '2026-11-18:dark:S003', '2026-11-17:0.5');
    expect(await publishingBanner(args)).toEqual({
      distorted: [
        { day: '2026-11-20', factor: 0 },
        { day: '2026-11-19', factor: 0.1, metrics: ['traffic'], stores: ['S001', 'S003'] },
        // A store gone dark, and a half day on every store.
        { day: '2026-11-18', factor: 0, stores: ['S003'] },
        { day: '2026-11-17', factor: 0.5 },
      ],
    });
  });

  it('--publish-after publishes the hidden windows while it runs', async () => {
    // The day before yesterday: every store's local day in its UTC window has ended, so all of it is served.
    const dayBefore = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const stdout = new Collector();
    const controller = new AbortController();
    const done = runCli(['sandbox', '--port', '0', '--stores', '2', '--hide-day', dayBefore, '--publish-after', '1'], {
      stdout,
      stderr: new Collector(),
      env: {},
      signal: controller.signal,
    });
    try {
      await waitUntil(() => stdout.text.includes('\n'), 'the first line');
      const base = /^sandbox listening on (\S+)/.exec(stdout.text)?.[1] ?? '';
      const count = async (): Promise<number> => {
        const response = await fetch(`${base}/api/bi/area-metrics/traffic/?${new URLSearchParams(dayParams(dayBefore)).toString()}`, {
          headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
        });
        return ((await response.json()) as { count: number }).count;
      };
      expect(await count()).toBe(0);
      await waitUntil(async () => (await count()) > 0, 'the hidden day published', 10_000);
      expect(await count()).toBe(2);
    } finally {
      controller.abort(new InterruptedError('SIGINT'));
      expect(await done).toBe(0);
    }
  });

  it.each([
    ['--hide-day', 'yesterday'],
    ['--hide-day', '2026-02-30'],
    ['--correct-day', '2026-11-18:x'],
    ['--distort-day', '2026-11-18'],
    ['--distort-day', '2026-11-18:-1'],
    ['--distort-day', '2026-11-18:1001'],
    ['--distort-day', 'trafic@2026-11-18:0'],
    ['--publish-after', '-1'],
  ])('%s %s is exit 2', async (flag, value) => {
    const result = await run([flag, value]);
    expect(result.code).toBe(2);
    expect(result.errors).toHaveLength(1);
  });
});
