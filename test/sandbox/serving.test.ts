import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { allPages, dayParams, metricUrl, YESTERDAY } from './helpers.js';

const DAY_MS = 86_400_000;
const WINDOW = { gte: `${YESTERDAY}T00:00:00Z`, lte: `${YESTERDAY}T23:59:59Z` };

interface Result {
  store_code: string;
  date: string;
  values: Record<string, unknown>[];
}

/** A clock the test sets; both sandboxes read it on every request. */
let clock = new Date('2026-11-22T10:00:00Z');
let finalOnly: Sandbox;
let inProgress: Sandbox;

beforeAll(async () => {
  // 14 stores: every offset the sandbox has, from -11:00 to +13:00.
  const options = { stores: 14, zones: 6, days: 3, seed: 5, now: () => clock };
  finalOnly = await startSandbox(options);
  inProgress = await startSandbox({ ...options, serveInProgress: true });
});
afterAll(async () => {
  await finalOnly.close();
  await inProgress.close();
});

function served(sandbox: Sandbox, at: string): Result[] {
  clock = new Date(at);
  return sandbox.results('traffic', WINDOW) as Result[];
}

const byStore = (results: Result[]): Map<string, Result> => new Map(results.map((result) => [result.store_code, result]));
const endOf = (result: Result): number => Date.parse(result.date) + DAY_MS;

describe('sandbox: a store-local day is served once it has ended', () => {
  it('serves exactly the results whose local day has ended (24 h after its local midnight) at request time', () => {
    const every = served(inProgress, '2026-11-22T10:00:00Z');
    expect(every).toHaveLength(14);
    const now = Date.parse('2026-11-22T10:00:00Z');
    const ended = every
      .filter((result) => endOf(result) <= now)
      .map((result) => result.store_code)
      .sort();
    // Stores west of UTC down to -10:00 have ended their 2026-11-21; every store east of UTC is still in 2026-11-22.
    expect(ended.length).toBeGreaterThan(0);
    expect(ended.length).toBeLessThan(14);
    expect(
      served(finalOnly, '2026-11-22T10:00:00Z')
        .map((result) => result.store_code)
        .sort(),
    ).toEqual(ended);
    for (const result of every.filter((candidate) => !ended.includes(candidate.store_code))) {
      expect(result.date.startsWith('2026-11-22') || result.date.endsWith('-11:00')).toBe(true);
    }
  });

  it('publishes a local day at the exact instant it ends, offsets included', () => {
    const far = (results: Result[]): Result | undefined => results.find((result) => result.date.endsWith('-11:00'));
    // 2026-11-21T00:00:00-11:00 is 2026-11-21T11:00:00Z; its day ends at 2026-11-22T11:00:00Z.
    expect(far(served(finalOnly, '2026-11-22T10:59:59.999Z'))).toBeUndefined();
    expect(far(served(finalOnly, '2026-11-22T11:00:00.000Z'))?.date).toBe('2026-11-21T00:00:00-11:00');
    // 2026-11-22T00:00:00+01:00 (2026-11-21T23:00:00Z) is the last to end: at 2026-11-22T23:00:00Z.
    expect(served(finalOnly, '2026-11-22T22:59:00Z')).toHaveLength(13);
    expect(served(finalOnly, '2026-11-22T23:00:00Z')).toHaveLength(14);
  });

  it('answers count and pages by the same rule over HTTP', async () => {
    clock = new Date('2026-11-22T10:00:00Z');
    const early = await allPages(finalOnly, metricUrl(finalOnly, 'unique-users', dayParams(YESTERDAY, { page_size: '3' })));
    const expected = (finalOnly.results('unique-users', WINDOW) as Result[]).map((result) => result.store_code).sort();
    expect(early[0]!.count).toBe(expected.length);
    expect(early.flatMap((page) => page.results.map((result) => result.store_code)).sort()).toEqual(expected);
    // Later the same answers hold every store: pages served earlier are not reused from a cache.
    clock = new Date('2026-11-22T23:30:00Z');
    const late = await allPages(finalOnly, metricUrl(finalOnly, 'unique-users', dayParams(YESTERDAY, { page_size: '3' })));
    expect(late[0]!.count).toBe(14);
  });
});

describe('sandbox --serve-in-progress', () => {
  it('serves running days with values that change from hour to hour, deterministic for a clock', () => {
    const at10 = byStore(served(inProgress, '2026-11-22T10:00:00Z'));
    const at1040 = byStore(served(inProgress, '2026-11-22T10:40:00Z'));
    const at11 = byStore(served(inProgress, '2026-11-22T11:05:00Z'));
    const again = byStore(served(inProgress, '2026-11-22T10:00:00Z'));
    const running = [...at11.values()].filter((result) => endOf(result) > Date.parse('2026-11-22T11:05:00Z'));
    expect(running.length).toBeGreaterThan(0);
    for (const { store_code: store } of running) {
      expect(at11.get(store)!.values).not.toEqual(at10.get(store)!.values);
      expect(at1040.get(store)!.values).toEqual(at10.get(store)!.values);
      expect(again.get(store)!.values).toEqual(at10.get(store)!.values);
    }
  });

  it('serves a day that has ended with its final values, the ones served without the switch', () => {
    const at = '2026-11-22T23:30:00Z';
    const final = byStore(served(finalOnly, at));
    const progressive = byStore(served(inProgress, at));
    expect(final.size).toBe(14);
    expect(progressive).toEqual(final);
    // The same stores an hour before their day ended carried other, provisional values.
    const before = byStore(served(inProgress, '2026-11-22T21:30:00Z'));
    const plusTwo = [...final.values()].find((result) => result.date.endsWith('+02:00'))!;
    expect(before.get(plusTwo.store_code)!.values).not.toEqual(plusTwo.values);
  });
});
