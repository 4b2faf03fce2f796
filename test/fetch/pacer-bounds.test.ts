import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/fetch/clock.js';
import { VendorDownError } from '../../src/fetch/outage.js';
import { describeRequests, Pacer, type Ticket } from '../../src/fetch/pacer.js';
import { boundedWindow, PACE_FLOOR_RPS } from '../../src/fetch/wait-cap.js';
import type { Logger } from '../../src/log/logger.js';
import { virtualClock } from '../helpers/clock.js';

function pacerOn(options: { maxRps?: number; maxWaitMs?: number; units?: number } = {}): {
  pacer: Pacer;
  clock: ReturnType<typeof virtualClock>;
  warnings: string[];
  paces: string[];
} {
  const clock = virtualClock(0);
  const warnings: string[] = [];
  const paces: string[] = [];
  const logger: Logger = { debug: (message) => paces.push(message), info() {}, warn: (message) => warnings.push(message), error() {} };
  return { pacer: new Pacer({ clock, logger, ...options }), clock, warnings, paces };
}

/** Acquires for `count` calls at once; resolves with the tickets granted before anything else happens. */
async function grantedAtOnce(pacer: Pacer, count: number): Promise<{ granted: Ticket[]; waiting: Promise<Ticket>[] }> {
  const granted: Ticket[] = [];
  const waiting = Array.from({ length: count }, () =>
    pacer.acquire(pacer.outage.join()).then((ticket) => {
      granted.push(ticket);
      return ticket;
    }),
  );
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  return { granted, waiting };
}

describe('Pacer: a slow start while the limit is unknown', () => {
  it('grows the requests in flight from the answers, by a fifth of a request for each one accepted', async () => {
    const { pacer } = pacerOn();
    const { granted, waiting } = await grantedAtOnce(pacer, 16);
    const inFlightAfter: number[] = [granted.length];
    let answered = 0;
    // Answer the oldest request in flight, one at a time, and see how many are in flight then.
    while (answered < 10) {
      pacer.answered(granted[answered]!);
      answered++;
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      inFlightAfter.push(granted.length - answered);
    }
    // 1 + a fifth of the accepted answers, rounded up.
    expect(inFlightAfter).toEqual([1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3]);
    for (const ticket of granted.slice(answered)) pacer.answered(ticket);
    await Promise.all(waiting).then((tickets) => tickets.forEach((ticket) => pacer.answered(ticket)));
  });

  it('grows nothing from a 429, and ends once a limit is known: --max-rps and an announcement hold from the first request', async () => {
    const capped = pacerOn({ maxRps: 1000 });
    const first = await capped.pacer.acquire(capped.pacer.outage.join());
    capped.pacer.answered(first);
    expect((await grantedAtOnce(capped.pacer, 8)).granted).toHaveLength(8);

    const announced = pacerOn();
    const one = await announced.pacer.acquire(announced.pacer.outage.join());
    announced.pacer.answered(one, new Headers({ 'ratelimit-policy': '"default";q=100;w=1' }));
    expect((await grantedAtOnce(announced.pacer, 8)).granted).toHaveLength(8);
  });
});

describe('Pacer: a run large enough starts unafraid', () => {
  /** In flight at once, for 16 calls, after the first request's answer and a unit's first answer of `pages` pages. */
  async function inFlightAfterFirstUnit(options: { units?: number }, pages: number): Promise<number> {
    const { pacer } = pacerOn(options);
    const first = await pacer.acquire(pacer.outage.join());
    pacer.answered(first);
    pacer.unitPages(pages);
    const { granted } = await grantedAtOnce(pacer, 16);
    return granted.length;
  }

  it("lets a hundredth of the run's requests go at once, the run's size from the units and their first answers", async () => {
    // 57 units of 30 pages: 1,710 requests, 17 of them at once; all 16 calls go.
    expect(await inFlightAfterFirstUnit({ units: 57 }, 30)).toBe(16);
    // 57 units of 10 pages: 570 requests, 5 at once.
    expect(await inFlightAfterFirstUnit({ units: 57 }, 10)).toBe(5);
  });

  it('keeps the slow start for a small run, and for a run that does not say its units', async () => {
    // 57 units of 3 pages: 171 requests, one at once; the slow start's 2 after one answer.
    expect(await inFlightAfterFirstUnit({ units: 57 }, 3)).toBe(2);
    expect(await inFlightAfterFirstUnit({}, 30)).toBe(2);
  });

  it('takes the mean of the units seen: one large unit among small ones counts as one', async () => {
    const { pacer } = pacerOn({ units: 100 });
    const first = await pacer.acquire(pacer.outage.join());
    pacer.answered(first);
    pacer.unitPages(300);
    pacer.unitPages(1);
    pacer.unitPages(1);
    // (300 + 1 + 1) / 3 pages a unit for 100 units: 10,066 requests, 100 at once.
    expect((await grantedAtOnce(pacer, 16)).granted).toHaveLength(16);
    const small = pacerOn({ units: 100 });
    const one = await small.pacer.acquire(small.pacer.outage.join());
    small.pacer.answered(one);
    for (let unit = 0; unit < 9; unit++) small.pacer.unitPages(1);
    small.pacer.unitPages(91);
    // (9 + 91) / 10 pages a unit for 100 units: 1,000 requests, 10 at once.
    expect((await grantedAtOnce(small.pacer, 16)).granted).toHaveLength(10);
  });
});

describe('Pacer: every wait the vendor asks for is capped', () => {
  it('holds a spent budget with a reset of a day for the cap only, warns once, and ends the run when asked again', async () => {
    const { pacer, clock, warnings } = pacerOn({ maxWaitMs: 2000 });
    const spent = new Headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' });
    const first = await pacer.acquire(pacer.outage.join());
    expect(pacer.answered(first, spent)).toBeUndefined();
    expect(warnings).toEqual([
      expect.stringMatching(/asks to wait 86400 s, more than --max-wait 2 s: waiting 2 s; if it asks again, the run ends$/),
    ]);
    const second = await pacer.acquire(pacer.outage.join());
    expect(clock.now()).toBe(2000);
    const down = pacer.answered(second, spent);
    expect(down).toBeInstanceOf(VendorDownError);
    expect(down?.message).toMatch(
      /not serving this run: .*asks to wait 86400 s, more than --max-wait 2 s, again after waiting 2 s; .*raise --max-wait$/,
    );
    // Every call waiting or to come ends with it.
    await expect(pacer.acquire(pacer.outage.join())).rejects.toBe(down);
    expect(Math.max(...clock.waits)).toBeLessThanOrEqual(2000);
  });

  it('takes a reset far past Node timer limit (an epoch in 2100) as the cap, never a wait longer', async () => {
    const { pacer, clock } = pacerOn({ maxWaitMs: 5000 });
    const first = await pacer.acquire(pacer.outage.join());
    pacer.answered(first, new Headers({ ratelimit: '"default";r=0;t=31536000' }));
    await pacer.acquire(pacer.outage.join());
    expect(clock.waits).toEqual([5000]);
  });

  it('answers from requests sent before the first ask beyond the cap are the same ask', async () => {
    const { pacer } = pacerOn({ maxWaitMs: 1000 });
    for (let sent = 0; sent < 4; sent++) pacer.answered(await pacer.acquire(pacer.outage.join()));
    const [a, b] = (await grantedAtOnce(pacer, 2)).granted;
    expect(pacer.asked(a!, 100_000, 'HTTP 503 with Retry-After')).toBeUndefined();
    expect(pacer.asked(b!, 100_000, 'HTTP 503 with Retry-After')).toBeUndefined();
    // Within the cap is no ask at all.
    expect(pacer.asked(a!, 1000, 'HTTP 503 with Retry-After')).toBeUndefined();
  });

  it('keeps an announced window of a day as the same rate within the cap, and no pace below the floor', async () => {
    const { pacer } = pacerOn({ maxWaitMs: 120_000 });
    const first = await pacer.acquire(pacer.outage.join());
    pacer.answered(first, new Headers({ 'ratelimit-policy': '"default";q=8640;w=86400' }));
    // 0.1/s: 12 per 120 s.
    expect(pacer.stats().paceRps).toBe(0.1);
    const starved = pacerOn();
    for (let answer = 0; answer < 3; answer++) {
      starved.pacer.answered(
        await starved.pacer.acquire(starved.pacer.outage.join()),
        new Headers({ 'ratelimit-policy': '"default";q=1;w=86400' }),
      );
    }
    // One change of pace, not one per answer repeating it.
    expect(starved.paces).toHaveLength(1);
    expect(starved.pacer.stats().paceRps).toBeGreaterThanOrEqual(0.09);
    expect(describeRequests(starved.pacer.stats())).toMatch(/pace 0\.1\/s$/);
  });

  it('bounds any window: within the cap at the same rate, never slower than the floor', () => {
    expect(boundedWindow({ quota: 3600, windowMs: 3_600_000 }, 120_000)).toEqual({ quota: 120, windowMs: 120_000 });
    expect(boundedWindow({ quota: 1, windowMs: 86_400_000 }, 120_000)).toEqual({ quota: 1, windowMs: 1000 / PACE_FLOOR_RPS });
    expect(boundedWindow({ quota: 0, windowMs: 1000 }, 120_000).quota).toBe(1);
    expect(boundedWindow({ quota: 10, windowMs: 1000 }, 120_000)).toEqual({ quota: 10, windowMs: 1000 });
  });

  it('learns from a 429 whose Retry-After is a year a window of the cap at most', async () => {
    const { pacer } = pacerOn({ maxWaitMs: 3000 });
    for (let sent = 0; sent < 3; sent++) pacer.answered(await pacer.acquire(pacer.outage.join()));
    const refused = await pacer.acquire(pacer.outage.join());
    pacer.throttled(refused, 3000, 31_536_000_000);
    pacer.answered(refused);
    // 3 accepted within the window of 3 s, not of a year.
    expect(pacer.stats().paceRps).toBeCloseTo(3 / 3 / 1.01, 2);
  });
});

describe('systemClock', () => {
  it('sets no timer past Node limit: a wait of years is cut to it, with no TimeoutOverflowWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      let ended = false;
      const sleep = systemClock.sleep(31_536_000_000, controller.signal).then(
        () => (ended = true),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 20)); // a negative check: a year's sleep has not ended at once
      expect(ended).toBe(false);
      controller.abort(new Error('done'));
      await sleep;
      expect(warnings.filter((warning) => warning.name === 'TimeoutOverflowWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
