import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedCacheKey } from '../../../src/broker/token/cache.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { waitUntil } from '../../helpers/cli.js';
import { startRedis, warnIfRedisMissing, type TestRedis } from '../../helpers/redis.js';
import {
  ANDROID_APP,
  type LogCapture,
  TestClock,
  brokerConfig,
  brokerFetch,
  injectTestBroker,
  startTestBroker,
  tokenUrl,
} from '../broker-harness.js';

const CLIENT_ID = 'redis-test-client';
const CLIENT_SECRET = 'redis-test-secret-9c1e';
const missing = warnIfRedisMissing("the broker's Redis shared-cache tests (test/broker/token/cache.test.ts)");

async function getToken(url: string): Promise<{ status: number; token?: string; expiresIn?: number }> {
  const response = await brokerFetch(url);
  const body = (await response.json()) as { access_token?: string; expires_in?: number };
  return {
    status: response.status,
    ...(body.access_token ? { token: body.access_token } : {}),
    ...(body.expires_in !== undefined ? { expiresIn: body.expires_in } : {}),
  };
}

describe.skipIf(missing)('broker instances sharing a real Redis', () => {
  let redis: TestRedis;
  let auth: Sandbox;
  const brokers: { close(): Promise<void> }[] = [];
  const logs: LogCapture[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
    const text = logs.map((capture) => capture.text()).join('\n');
    expect(text).not.toContain(CLIENT_SECRET);
  });
  afterEach(async () => {
    while (brokers.length > 0) await brokers.pop()?.close();
    await auth?.close();
    const flush = new Redis(redis.url);
    await flush.flushall();
    await flush.quit();
  });

  async function startAuth(ttlSeconds = 3600): Promise<Sandbox> {
    auth = await startSandbox({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenTtlSeconds: ttlSeconds, stores: 1, days: 1 });
    return auth;
  }

  /** An instance driven through `inject` (several share one Redis as they would share it across hosts). */
  async function instance(redisUrl = redis.url, extra: { authTimeoutSeconds?: number; marginSeconds?: number; clock?: TestClock } = {}) {
    const { clock, ...fixture } = extra;
    const broker = await injectTestBroker(
      { authUrl: auth.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redisUrl, ...fixture },
      clock !== undefined ? { now: clock.now } : {},
    );
    brokers.push(broker);
    logs.push(broker.logs);
    return { broker, logs: broker.logs };
  }

  async function listeningInstance() {
    const started = await startTestBroker({ authUrl: auth.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redisUrl: redis.url });
    brokers.push(started.broker);
    logs.push(started.logs);
    return started;
  }

  it("a second instance on another port serves the first one's token without an auth call", async () => {
    await startAuth();
    // Listening, each on its own port, as two hosts would run them.
    const [a, b] = [await listeningInstance(), await listeningInstance()];
    expect(new URL(a.broker.url).port).not.toBe(new URL(b.broker.url).port);
    const fromA = await getToken(tokenUrl(a.broker, ANDROID_APP));
    const fromB = await getToken(tokenUrl(b.broker, ANDROID_APP));
    expect(fromA.status).toBe(200);
    expect(fromB).toMatchObject({ status: 200, token: fromA.token });
    expect(fromB.expiresIn).toBeLessThanOrEqual(fromA.expiresIn as number);
    expect(auth.tokenRequests()).toBe(1);
    expect(b.logs.entries().find((entry) => entry.msg === 'request completed')).toMatchObject({ cache: 'shared' });
    const ready = await brokerFetch(new URL('/readyz', b.broker.url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ cache: 'redis', redis: 'up' });
    expect(await (await brokerFetch(new URL('/metrics', b.broker.url))).text()).toMatch(/^area_metrics_broker_redis_up 1$/m);
  });

  it('100 concurrent cold requests to each of two instances make one auth call', async () => {
    await startAuth();
    auth.setFaults({ tokenLatencyMs: 150 });
    const a = await instance();
    const b = await instance();
    const results = await Promise.all(
      Array.from({ length: 100 }, () => [getToken(tokenUrl(a.broker, ANDROID_APP)), getToken(tokenUrl(b.broker, ANDROID_APP))]).flat(),
    );
    expect(results.every((result) => result.status === 200)).toBe(true);
    expect(new Set(results.map((result) => result.token)).size).toBe(1);
    expect(auth.tokenRequests()).toBe(1);
  });

  /** A crashed instance's refresh lock: held for `ms`, and nobody will ever write the token. */
  async function crashedLock(ms: number): Promise<void> {
    const config = brokerConfig({ authUrl: auth.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    const platform = config.platforms.get('android')!;
    const holder = new Redis(redis.url);
    await holder.set(`${config.redisKeyPrefix}lock:${sharedCacheKey(ANDROID_APP, platform)}`, 'crashed-instance', 'PX', ms);
    await holder.quit();
  }

  it("a crashed instance's lock: once it expires, a waiting instance takes it and fetches the token", async () => {
    await startAuth();
    const a = await instance();
    await crashedLock(300);
    const startedAt = Date.now();
    const result = await getToken(tokenUrl(a.broker, ANDROID_APP));
    expect(result.status).toBe(200);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
    expect(auth.tokenRequests()).toBe(1);
  });

  it('a lock loser never calls the auth server itself: it answers 503 within the auth timeout', async () => {
    await startAuth();
    const a = await instance(redis.url, { authTimeoutSeconds: 0.5 });
    await crashedLock(30_000);
    const startedAt = Date.now();
    const result = await getToken(tokenUrl(a.broker, ANDROID_APP));
    expect(result.status).toBe(503);
    expect(Date.now() - startedAt).toBeLessThan(10_000); // the 0.5 s auth timeout, not the 30 s crashed lock
    expect(auth.tokenRequests()).toBe(0);
  });

  it('keeps answering from memory and the auth server when Redis goes down, and /readyz reports it', async () => {
    await startAuth();
    const own = await startRedis();
    try {
      const a = await instance(own.url);
      const first = await getToken(tokenUrl(a.broker, ANDROID_APP));
      await own.stop();
      await waitUntil(() => /Redis unavailable/.test(a.logs.text()), 'the broker to log Redis down', 5000);
      // Still ready: it serves from memory and the auth server; the body says Redis is down.
      const ready = await brokerFetch(new URL('/readyz', a.broker.url));
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'degraded', redis: 'down' });
      expect(a.logs.text()).toMatch(/Redis unavailable; serving tokens from this instance's memory/);
      const cached = await getToken(tokenUrl(a.broker, ANDROID_APP));
      expect(cached).toMatchObject({ status: 200, token: first.token });
      expect(auth.tokenRequests()).toBe(1);
      // A cold application still gets a token from the auth server.
      const web = await getToken(tokenUrl(a.broker, 'shop.acme.example'));
      expect(web.status).toBe(200);
      expect(auth.tokenRequests()).toBe(2);
    } finally {
      await own.stop();
    }
  });

  it('uses Redis again once it is back, and /readyz says so', async () => {
    await startAuth();
    const first = await startRedis();
    let second: TestRedis | undefined;
    try {
      const a = await instance(first.url);
      await first.stop();
      const redisState = async (): Promise<unknown> =>
        ((await (await brokerFetch(new URL('/readyz', a.broker.url))).json()) as { redis?: unknown }).redis;
      await waitUntil(async () => (await redisState()) === 'down', '/readyz to say Redis is down', 5000);
      expect(await redisState()).toBe('down');
      second = await startRedis({ port: first.port });
      // ioredis reconnects in the background (at most 2 s apart); wait for the broker to notice.
      await waitUntil(async () => (await redisState()) === 'up', '/readyz to say Redis is up again', 5000);
      expect(await redisState()).toBe('up');
      expect(a.logs.text()).toMatch(/Redis connected[^\n]*\n(.|\n)*Redis unavailable(.|\n)*Redis connected/);
      const b = await instance(first.url);
      const fromA = await getToken(tokenUrl(a.broker, ANDROID_APP));
      const fromB = await getToken(tokenUrl(b.broker, ANDROID_APP));
      expect(fromB.token).toBe(fromA.token);
      expect(auth.tokenRequests()).toBe(1);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });

  it('starts and serves when Redis is unreachable at start', async () => {
    await startAuth();
    const gone = await startRedis();
    const url = gone.url;
    await gone.stop();
    const a = await instance(url);
    expect((await getToken(tokenUrl(a.broker, ANDROID_APP))).status).toBe(200);
    const ready = await brokerFetch(new URL('/readyz', a.broker.url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ redis: 'down' });
    expect(a.logs.text()).toMatch(/Redis unavailable/);
  });

  it('shares a stale token when the auth server is down: a second instance serves it in its margin', async () => {
    await startAuth(5);
    const clock = new TestClock();
    const a = await instance(redis.url, { marginSeconds: 4, clock });
    const b = await instance(redis.url, { marginSeconds: 4, clock });
    const first = await getToken(tokenUrl(a.broker, ANDROID_APP));
    clock.advance(1100);
    await auth.close();
    const fromB = await getToken(tokenUrl(b.broker, ANDROID_APP));
    expect(fromB).toMatchObject({ status: 200, token: first.token });
  });
});
