import { describe, expect, it } from 'vitest';
import { describeRequests, Pacer } from '../../src/fetch/pacer.js';
import type { LogFields, Logger } from '../../src/log/logger.js';
import { virtualClock, type VirtualClock } from '../helpers/clock.js';

/** A pacer on a virtual clock, with its -v lines. */
function pacerOn(options: { maxRps?: number } = {}): { pacer: Pacer; clock: VirtualClock; paces: string[]; fields: LogFields[] } {
  const clock = virtualClock(0);
  const paces: string[] = [];
  const fields: LogFields[] = [];
  const logger: Logger = {
    debug: (message, extra) => {
      paces.push(message);
      if (extra) fields.push(extra);
    },
    info() {},
    warn() {},
    error() {},
  };
  return { pacer: new Pacer({ clock, logger, ...options }), clock, paces, fields };
}

/** Sends `count` requests one after another, each answered `latencyMs` after it went; returns when each went. */
async function sendInTurn(pacer: Pacer, clock: VirtualClock, count: number, latencyMs = 0, headers?: () => Headers): Promise<number[]> {
  const sent: number[] = [];
  for (let index = 0; index < count; index++) {
    const ticket = await pacer.acquire(pacer.outage.join());
    sent.push(clock.now());
    if (latencyMs) await clock.sleep(latencyMs);
    pacer.answered(ticket, headers?.());
  }
  return sent;
}

const draft = (quota: number, windowSeconds: number, remaining: number): Headers =>
  new Headers({ 'ratelimit-policy': `"default";q=${quota};w=${windowSeconds}`, ratelimit: `"default";r=${remaining};t=${windowSeconds}` });

describe('Pacer, with no limit known', () => {
  it('lets requests go at once, with no wait: a vendor that sets no limit never meets the pacer', async () => {
    const { pacer, clock, paces } = pacerOn();
    const sent = await sendInTurn(pacer, clock, 50);
    expect(new Set(sent)).toEqual(new Set([0]));
    expect(clock.waits).toEqual([]);
    expect(paces).toEqual([]);
    expect(pacer.stats()).toEqual({ requests: 50, throttled: 0 });
  });

  it('sends the first request alone: the others wait for its answer, which may announce a limit', async () => {
    const { pacer } = pacerOn();
    const first = await pacer.acquire(pacer.outage.join());
    let secondWent = false;
    const second = pacer.acquire(pacer.outage.join()).then((ticket) => {
      secondWent = true;
      return ticket;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondWent).toBe(false);
    pacer.answered(first);
    await second;
    expect(secondWent).toBe(true);
  });

  it('holds every request for a 429 Retry-After, and learns the pace from what was accepted before it', async () => {
    const { pacer, clock, paces, fields } = pacerOn();
    await sendInTurn(pacer, clock, 10, 10);
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused);
    const at = clock.now();
    // Every request of the run, not only the refused one's unit, waits out the Retry-After.
    const others = await Promise.all([1, 2, 3].map(() => pacer.acquire(pacer.outage.join())));
    expect(clock.now()).toBeGreaterThanOrEqual(at + 1000);
    for (const ticket of others) pacer.answered(ticket);
    expect(paces).toEqual([
      expect.stringMatching(
        /^pace: 10 requests per 1 s \(9\.9\/s\), HTTP 429 when 10 had been accepted within 1 s; every request held 1\.0 s$/,
      ),
    ]);
    expect(fields[0]).toMatchObject({ quota: 10, window_seconds: 1, source: 'learned' });
    expect(pacer.stats()).toEqual({ requests: 14, throttled: 1, paceRps: 9.9 });
  });

  it('learns once per episode: the 429s of requests sent before the first one arrived change nothing more', async () => {
    const { pacer, clock, paces } = pacerOn();
    // Twenty-five answers: the slow start lets six go at once.
    await sendInTurn(pacer, clock, 25);
    const inFlight = await Promise.all([1, 2, 3, 4, 5, 6].map(() => pacer.acquire(pacer.outage.join())));
    for (const ticket of inFlight.slice(0, 4)) pacer.answered(ticket);
    for (const ticket of inFlight.slice(4)) {
      pacer.throttled(ticket, 1000, 1000);
      pacer.answered(ticket);
    }
    expect(paces).toHaveLength(1);
    expect(paces[0]).toMatch(/^pace: 29 requests per 1 s/);
    expect(pacer.stats().throttled).toBe(2);
    expect(clock.waits).toEqual([]);
  });

  it('learns once the requests in flight at the first 429 are over: the accepted ones count, the refused ones not', async () => {
    const { pacer, clock, paces } = pacerOn();
    await sendInTurn(pacer, clock, 25);
    const [a, b, c, d, e, f] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => pacer.acquire(pacer.outage.join())));
    pacer.throttled(c!, 1000, 1000);
    pacer.answered(c!);
    for (const accepted of [a, b, e]) pacer.answered(accepted!);
    pacer.throttled(d!, 1000, 1000);
    pacer.answered(d!);
    expect(paces).toEqual([]);
    pacer.throttled(f!, 1000, 1000);
    pacer.answered(f!);
    // The first 25 and a, b and e: 28 accepted within the second.
    expect(paces).toEqual([expect.stringMatching(/^pace: 28 requests per 1 s .*HTTP 429 when 28 had been accepted within 1 s/)]);
  });

  it('counts what was accepted in the window back from when the vendor refused, not from when the 429 was read', async () => {
    const { pacer, clock, paces } = pacerOn();
    // Ten accepted, one every 100 ms, each answered 100 ms after it went: answers at 100 to 1,000 ms.
    await sendInTurn(pacer, clock, 10, 100);
    const refused = await pacer.acquire(pacer.outage.join());
    await clock.sleep(50);
    pacer.heard(refused);
    // Its body read and judged 150 ms later (a slow body, a busy loop): a window back from now would miss two.
    await clock.sleep(150);
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused);
    expect(paces).toEqual([expect.stringMatching(/^pace: 10 requests per 1 s .*when 10 had been accepted within 1 s/)]);
  });

  it('takes a 429 with nothing accepted before it as a hold only', async () => {
    const { pacer, clock, paces } = pacerOn();
    const ticket = await pacer.acquire(pacer.outage.join());
    pacer.throttled(ticket, 2000, 2000);
    pacer.answered(ticket);
    await sendInTurn(pacer, clock, 20);
    expect(clock.waits).toEqual([2000]);
    expect(paces).toEqual([]);
    expect(pacer.stats().paceRps).toBeUndefined();
  });
});

describe('Pacer, with a pace', () => {
  /** A pacer that has learned 4 requests a second from a 429. */
  async function learnedFour(): Promise<ReturnType<typeof pacerOn>> {
    const paced = pacerOn();
    const { pacer, clock } = paced;
    await sendInTurn(pacer, clock, 4, 5);
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused);
    return paced;
  }

  it('keeps to the quota in any window, counted from the answer of the request that opened it', async () => {
    const { pacer, clock } = await learnedFour();
    const sent = await sendInTurn(pacer, clock, 12, 50);
    // Bursts of 4 (bounded only by the requests in turn), each window starting a window (and 1%) after the answer
    // of the request that opened the one before.
    for (let index = 4; index < sent.length; index++) {
      expect(sent[index]! - sent[index - 4]!).toBeGreaterThanOrEqual(1000 + 50);
    }
    expect(sent[4]! - sent[3]!).toBeGreaterThan(500);
    expect(sent[3]! - sent[0]!).toBeLessThanOrEqual(150);
  });

  it('waits for the answer of a request still in flight before counting a window from it', async () => {
    const { pacer } = await learnedFour();
    const inFlight = await Promise.all([1, 2, 3, 4].map(() => pacer.acquire(pacer.outage.join())));
    let fifthWent = false;
    const fifth = pacer.acquire(pacer.outage.join()).then(() => (fifthWent = true));
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(fifthWent).toBe(false);
    for (const ticket of inFlight) pacer.answered(ticket);
    await fifth;
  });

  it('takes one request off once for two 429s of one episode while paced, and again at the next episode', async () => {
    const { pacer, clock, paces } = await learnedFour();
    // Both went before either answer came: one episode.
    const [first, second] = await Promise.all([1, 2].map(() => pacer.acquire(pacer.outage.join())));
    pacer.throttled(first!, 1000, 1000);
    pacer.answered(first!);
    pacer.throttled(second!, 1000, 1000);
    pacer.answered(second!);
    expect(paces.slice(1).map((line) => line.replace(/ \(.*/, ''))).toEqual(['pace: 3 requests per 1 s']);
    // A request sent after that episode began, refused too: a new episode, one less again.
    const later = await pacer.acquire(pacer.outage.join());
    pacer.throttled(later, 1000, 1000);
    pacer.answered(later);
    expect(paces.slice(1).map((line) => line.replace(/ \(.*/, ''))).toEqual(['pace: 3 requests per 1 s', 'pace: 2 requests per 1 s']);
    expect(clock.now()).toBeGreaterThan(0);
  });

  it('takes one request off the window at a 429 despite the pace', async () => {
    const { pacer, clock, paces } = await learnedFour();
    await sendInTurn(pacer, clock, 3, 5);
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused);
    expect(paces.at(-1)).toMatch(/^pace: 3 requests per 1 s .*HTTP 429 at this pace/);
    expect(pacer.stats().paceRps).toBe(2.97);
  });

  it('tries more requests per window after twenty windows without a 429 in which the pace held requests back', async () => {
    const { pacer, clock, paces } = await learnedFour();
    await sendInTurn(pacer, clock, 88, 5);
    expect(paces.at(-1)).toMatch(/^pace: 5 requests per 1 s .*no 429 in 20 windows: 1 more per window$/);
    // Twice as many at each probe that met no 429.
    await sendInTurn(pacer, clock, 110, 5);
    expect(paces.at(-1)).toMatch(/^pace: 7 requests per 1 s .*no 429 in 20 windows: 2 more per window$/);
    // A 429 brings the step back to one.
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused);
    expect(paces.at(-1)).toMatch(/^pace: 5 requests per 1 s .*HTTP 429 after a probe/);
  });

  it('goes back to the quota that held when the vendor refuses a probe, and waits twice as long before the next', async () => {
    const { pacer, clock, paces } = await learnedFour();
    await sendInTurn(pacer, clock, 88, 5);
    expect(paces.at(-1)).toMatch(/^pace: 5 requests per 1 s .*: 1 more per window$/);
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused);
    // Not one less than the probe's 5, which is the 4 already known to hold: the 4 itself.
    expect(paces.at(-1)).toMatch(
      /^pace: 4 requests per 1 s .*HTTP 429 after a probe; every request held 1\.0 s; next probe after 40 windows$/,
    );
    // Twenty windows (80 requests at 4 a window) are not enough any more; forty are.
    await sendInTurn(pacer, clock, 100, 5);
    expect(paces.at(-1)).toMatch(/HTTP 429 after a probe/);
    await sendInTurn(pacer, clock, 80, 5);
    expect(paces.at(-1)).toMatch(/^pace: 5 requests per 1 s .*no 429 in 40 windows: 1 more per window$/);
  });

  it('--max-rps caps the pace from the first request, whatever the vendor says', async () => {
    const { pacer, clock, paces } = pacerOn({ maxRps: 2 });
    const sent = await sendInTurn(pacer, clock, 6, 10, () => draft(100, 1, 99));
    expect(paces[0]).toMatch(/^pace: at most 2 requests per 1 s \(2\.0\/s\) \(--max-rps\)$/);
    expect(sent[2]! - sent[0]!).toBeGreaterThanOrEqual(1000);
    expect(sent[4]! - sent[2]!).toBeGreaterThanOrEqual(1000);
    expect(pacer.stats().paceRps).toBe(1.98);
  });

  it('reads a --max-rps below one as one request every so many seconds', async () => {
    const { pacer, clock } = pacerOn({ maxRps: 0.5 });
    const sent = await sendInTurn(pacer, clock, 3);
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(2000);
    expect(sent[2]! - sent[1]!).toBeGreaterThanOrEqual(2000);
  });
});

describe('Pacer, with a limit the vendor announces', () => {
  it('keeps to a RateLimit-Policy from the first answer on, before any 429', async () => {
    const { pacer, clock, paces } = pacerOn();
    const sent = await sendInTurn(pacer, clock, 9, 20, () => draft(3, 1, 2));
    expect(paces).toEqual([expect.stringMatching(/^pace: 3 requests per 1 s \(3\.0\/s\), as the vendor announces$/)]);
    for (let index = 3; index < sent.length; index++) expect(sent[index]! - sent[index - 3]!).toBeGreaterThanOrEqual(1000);
    // Announced again on every answer: logged once.
    expect(pacer.stats()).toEqual({ requests: 9, throttled: 0, paceRps: 2.97 });
  });

  it('learns the window of X-RateLimit-* headers from their reset', async () => {
    const { pacer, clock, paces } = pacerOn();
    const x = (): Headers => new Headers({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '2' });
    const sent = await sendInTurn(pacer, clock, 11, 10, x);
    expect(paces[0]).toMatch(/^pace: 5 requests per 2 s/);
    expect(sent[5]! - sent[0]!).toBeGreaterThanOrEqual(2000);
    expect(sent[10]! - sent[5]!).toBeGreaterThanOrEqual(2000);
  });

  it('holds the requests past a budget announced without a policy until its reset', async () => {
    const { pacer, clock } = pacerOn();
    const budget = (remaining: number): Headers => new Headers({ ratelimit: `"default";r=${remaining};t=3` });
    const first = await pacer.acquire(pacer.outage.join());
    pacer.answered(first, budget(2));
    const sent = await sendInTurn(pacer, clock, 3);
    expect(sent[0]).toBe(0);
    expect(sent[1]).toBe(0);
    expect(sent[2]).toBeGreaterThanOrEqual(3000);
  });

  it('counts the requests sent after the announcing one as spent', async () => {
    const { pacer, clock } = pacerOn();
    // Eight answers: the slow start lets three go at once.
    await sendInTurn(pacer, clock, 8);
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => pacer.acquire(pacer.outage.join())));
    // `a`'s answer says 2 left; `b` and `c` went after it: nothing is left until the reset.
    pacer.answered(a!, new Headers({ 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '5' }));
    pacer.answered(b!);
    pacer.answered(c!);
    const next = await pacer.acquire(pacer.outage.join());
    expect(next.send.at).toBeGreaterThanOrEqual(5000);
    expect(clock.now()).toBeGreaterThanOrEqual(5000);
  });

  it('keeps a pace a 429 taught below the announced one', async () => {
    const { pacer, clock, paces } = pacerOn();
    await sendInTurn(pacer, clock, 2, 5, () => draft(10, 1, 9));
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 1000, 1000);
    pacer.answered(refused, draft(10, 1, 0));
    await sendInTurn(pacer, clock, 3, 5, () => draft(10, 1, 5));
    expect(paces.map((line) => line.replace(/ \(.*/, ''))).toEqual(['pace: 10 requests per 1 s', 'pace: 9 requests per 1 s']);
  });
});

describe('describeRequests', () => {
  it('says the requests, the 429s and the pace, leaving out what did not happen', () => {
    expect(describeRequests({ requests: 1, throttled: 0 })).toBe('1 request');
    expect(describeRequests({ requests: 171, throttled: 3, paceRps: 9.9 })).toBe('171 requests, 3 answered 429, pace 9.9/s');
  });
});
