import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { SlidingWindowThrottle } from '../../src/sandbox/throttle.js';
import { basic, dayParams, metricUrl, NOW, YESTERDAY } from './helpers.js';

describe('SlidingWindowThrottle (counted as Django REST Framework counts)', () => {
  it('lets `limit` requests through in any second and refuses the next with the whole seconds to wait', () => {
    const throttle = new SlidingWindowThrottle();
    const decisions = [0, 100, 200, 900].map((at) => throttle.decide(3, at));
    expect(decisions).toEqual([
      { allowed: true, remaining: 2 },
      { allowed: true, remaining: 1 },
      { allowed: true, remaining: 0 },
      // 100 ms until the oldest leaves the window: Retry-After rounds up to 1.
      { allowed: false, retryAfterSeconds: 1 },
    ]);
  });

  it('does not count refused requests, and slides: a request leaves the window a second after it came', () => {
    const throttle = new SlidingWindowThrottle();
    for (const at of [0, 10, 20]) throttle.decide(3, at);
    for (const at of [30, 500, 999]) expect(throttle.decide(3, at).allowed).toBe(false);
    expect(throttle.decide(3, 1000)).toEqual({ allowed: true, remaining: 0 });
    expect(throttle.decide(3, 1005).allowed).toBe(false);
    expect(throttle.decide(3, 1010)).toEqual({ allowed: true, remaining: 0 });
  });

  it('says when the next slot frees and when the window is empty, in whole seconds', () => {
    const throttle = new SlidingWindowThrottle();
    expect(throttle.secondsToNextSlot(0)).toBe(0);
    throttle.decide(10, 0);
    throttle.decide(10, 900);
    expect(throttle.secondsToNextSlot(950)).toBe(1);
    expect(throttle.secondsToEmpty(950)).toBe(1);
  });
});

describe('the sandbox rate limit', () => {
  let sandbox: Sandbox;
  const url = (): string => metricUrl(sandbox, 'traffic', dayParams(YESTERDAY, { page_size: '1' }));
  const get = (user = sandbox.clientId, password = sandbox.clientSecret): Promise<Response> =>
    fetch(url(), { headers: { authorization: basic(user, password) } });
  /** Sends `count` requests at once and returns the answers, in the order sent. */
  async function burst(count: number): Promise<Response[]> {
    const answers = await Promise.all(Array.from({ length: count }, () => get()));
    await Promise.all(answers.map((answer) => answer.arrayBuffer()));
    return answers;
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ stores: 4, zones: 2, days: 2, now: () => NOW });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('answers 429 with Retry-After in whole seconds past n requests a second, and announces nothing by default', async () => {
    sandbox.setFaults({ rateLimit: { perSecond: 3 } });
    const answers = await burst(5);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 429, 429]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.headers.get('retry-after')).toBe('1');
    for (const answer of answers) {
      expect(answer.headers.get('ratelimit')).toBeNull();
      expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('announces the limit with the IETF draft fields', async () => {
    sandbox.setFaults({ rateLimit: { perSecond: 3, headers: 'draft' } });
    const answers = await burst(4);
    const ok = answers.filter((answer) => answer.status === 200);
    expect(ok.map((answer) => answer.headers.get('ratelimit-policy'))).toEqual([
      '"default";q=3;w=1',
      '"default";q=3;w=1',
      '"default";q=3;w=1',
    ]);
    expect(ok.map((answer) => answer.headers.get('ratelimit')).sort()).toEqual([
      '"default";r=0;t=1',
      '"default";r=1;t=1',
      '"default";r=2;t=1',
    ]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.headers.get('ratelimit')).toBe('"default";r=0;t=1');
  });

  it('announces the limit with X-RateLimit-* headers', async () => {
    sandbox.setFaults({ rateLimit: { perSecond: 2, headers: 'x' } });
    const answers = await burst(2);
    expect(answers.map((answer) => answer.headers.get('x-ratelimit-limit'))).toEqual(['2', '2']);
    expect(answers.map((answer) => answer.headers.get('x-ratelimit-remaining')).sort()).toEqual(['0', '1']);
    expect(answers.map((answer) => answer.headers.get('x-ratelimit-reset'))).toEqual(['1', '1']);
  });

  it('checks the credentials first, as the vendor does: a rejected request is not counted', async () => {
    sandbox.setFaults({ rateLimit: { perSecond: 1 } });
    expect((await get('demo-client', 'wrong')).status).toBe(401);
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
  });

  it('lets requests through again once the window has passed, and starts counting again when the faults are set', async () => {
    sandbox.setFaults({ rateLimit: { perSecond: 1 } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    sandbox.setFaults({ rateLimit: { perSecond: 1 } });
    expect((await get()).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1010)); // waits out the real 1 s window: the point, not a race
    expect((await get()).status).toBe(200);
  });

  it('refuses a rate limit outside its range', () => {
    expect(() => sandbox.setFaults({ rateLimit: { perSecond: 0 } })).toThrow(/rateLimit\.perSecond/);
    expect(() => sandbox.setFaults({ rateLimit: { perSecond: 5, headers: 'ietf' as 'draft' } })).toThrow(/rateLimit\.headers/);
  });
});
