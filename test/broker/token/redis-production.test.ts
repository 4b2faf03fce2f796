import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { resolveBrokerConfig } from '../../../src/broker/config/config.js';
import { startBroker, type RunningBroker } from '../../../src/broker/http/server.js';
import { waitUntil } from '../../helpers/cli.js';
import { startFakeAuthServer, type FakeAuthServer } from '../../helpers/fake-auth-server.js';
import { startRedis, warnIfRedisMissing } from '../../helpers/redis.js';
import { LogCapture, brokerFetch, injectedBroker, untilRedisKnown, type TestBroker, useCleanups } from '../broker-harness.js';

const CLIENT_ID = 'redis-production-client';
const SECRET = 'redis-production-secret-77ab';
const APP = 'com.acme.shop';

const stops = useCleanups();

async function authServer(): Promise<FakeAuthServer> {
  const auth = await startFakeAuthServer({ clientId: CLIENT_ID, clientSecret: SECRET });
  stops.push(() => auth.close());
  return auth;
}

function configOf(authUrl: string, extra: Record<string, unknown>) {
  return resolveBrokerConfig(
    { authUrl, platforms: { android: { clientId: CLIENT_ID, clientSecretEnv: 'SECRET' } }, applications: { [APP]: 'android' }, ...extra },
    { env: { SECRET } },
  );
}

/** A listening broker: start-up itself is under test. */
async function startListening(authUrl: string, extra: Record<string, unknown>): Promise<{ broker: RunningBroker; logs: LogCapture }> {
  const logs = new LogCapture();
  const broker = await startBroker(configOf(authUrl, extra), { port: 0, logStream: logs, redisProbeIntervalMs: 100 });
  stops.push(() => broker.close());
  return { broker, logs };
}

/** A broker driven through `inject`. */
async function start(authUrl: string, extra: Record<string, unknown>): Promise<{ broker: TestBroker; logs: LogCapture }> {
  const broker = injectedBroker(configOf(authUrl, extra), { redisProbeIntervalMs: 100 });
  stops.push(() => broker.close());
  return { broker, logs: broker.logs };
}

const fetch = brokerFetch;

const tokenUrl = (broker: { readonly url: string }): string => `${broker.url}/api/gatekeeper-token?application_package=${APP}`;

async function readyz(broker: { readonly url: string }): Promise<Record<string, unknown>> {
  return (await (await fetch(`${broker.url}/readyz`)).json()) as Record<string, unknown>;
}

describe('start-up does not wait for Redis', () => {
  it('listens and serves at once when Redis accepts connections but never answers', async () => {
    const sockets = new Set<Socket>();
    const hung: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    stops.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => hung.close(resolve));
    });
    const port = (hung.address() as { port: number }).port;
    const auth = await authServer();
    // A first start without Redis pays for loading and compiling the broker, which is not what is timed here.
    const warm = await startListening(auth.url, {});
    await warm.broker.close();
    const startedAt = Date.now();
    const { broker } = await startListening(auth.url, { redis: { url: `redis://127.0.0.1:${port}` } });
    // A warm start takes tens of ms: 1.5 s leaves a busy machine room and stays below Redis's 2 s connect timeout.
    expect(Date.now() - startedAt).toBeLessThan(1500);
    expect((await fetch(tokenUrl(broker))).status).toBe(200);
    expect(await readyz(broker)).toMatchObject({ status: 'degraded', redis: 'down' });
  });
});

const redisMissing = warnIfRedisMissing("the broker's production Redis tests (test/broker/token/redis-production.test.ts)");

describe.skipIf(redisMissing)('Redis as it runs in production', () => {
  it('counts a Redis whose commands fail (READONLY) as down in /readyz and /metrics, logged once per change', async () => {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const auth = await authServer();
    const { broker, logs } = await start(auth.url, { redis: { url: redis.url } });
    await untilRedisKnown(logs);
    expect(await readyz(broker)).toMatchObject({ redis: 'up' });

    const admin = new Redis(redis.url);
    stops.push(async () => void admin.disconnect());
    // A replica of nothing: connected, answers PING, refuses every write with READONLY (as an old master after a failover).
    await admin.replicaof('127.0.0.1', '1');
    await waitUntil(async () => (await readyz(broker)).redis === 'down', '/readyz to say redis down', 20_000);
    const metrics = await (await fetch(`${broker.url}/metrics`)).text();
    expect(metrics).toContain('area_metrics_broker_redis_up 0');
    expect((await fetch(tokenUrl(broker))).status).toBe(200); // served from memory and the auth server meanwhile
    const downLines = logs.entries().filter((entry) => entry.redis === 'down');
    expect(downLines).toEqual([expect.objectContaining({ reason: 'READONLY', level: 'warn' })]);

    await admin.replicaof('NO', 'ONE');
    await waitUntil(async () => (await readyz(broker)).redis === 'up', '/readyz to say redis up again', 20_000);
    expect(logs.entries().filter((entry) => entry.redis === 'down')).toHaveLength(1);
  });

  it('counts every client request against one rate across instances sharing Redis', async () => {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const auth = await authServer();
    const extra = { redis: { url: redis.url }, limits: { perClientPerMinute: 4 } };
    const a = await start(auth.url, extra);
    const b = await start(auth.url, extra);
    await untilRedisKnown(a.logs);
    await untilRedisKnown(b.logs);
    const statuses = [];
    for (const broker of [a.broker, b.broker, a.broker, b.broker, a.broker, b.broker])
      statuses.push((await fetch(tokenUrl(broker))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('follows a Sentinel failover: the master killed under load, no request fails, tokens shared on the new master', async () => {
    const master = await startRedis();
    stops.push(() => master.stop());
    const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
    stops.push(() => replica.stop());
    const sentinel = await startRedis({
      sentinelConfig: [
        `sentinel monitor broker-master 127.0.0.1 ${master.port} 1`,
        'sentinel down-after-milliseconds broker-master 500',
        'sentinel failover-timeout broker-master 2000',
      ].join('\n'),
    });
    stops.push(() => sentinel.stop());
    const auth = await authServer();
    const { broker, logs } = await start(auth.url, {
      redis: { sentinels: [{ host: '127.0.0.1', port: sentinel.port }], name: 'broker-master' },
      limits: { perClientPerMinute: 1_000_000 },
    });
    await untilRedisKnown(logs);
    expect(await readyz(broker)).toMatchObject({ redis: 'up' });
    expect((await fetch(tokenUrl(broker))).status).toBe(200);

    let loading = true;
    const statuses: number[] = [];
    const load = (async () => {
      while (loading) {
        statuses.push((await fetch(tokenUrl(broker))).status);
        await new Promise(setImmediate); // an injected answer needs no I/O: let the timers and Redis events run
      }
    })();
    await master.kill();
    await waitUntil(async () => logs.entries().some((entry) => entry.redis === 'down'), 'the outage to be seen', 20_000);
    await waitUntil(async () => (await readyz(broker)).redis === 'up', 'Redis up again on the promoted replica', 30_000);
    loading = false;
    await load;
    expect(statuses.length).toBeGreaterThan(10);
    expect(new Set(statuses)).toEqual(new Set([200]));

    // The promoted replica takes the broker's writes: a new application's token is shared there.
    const promoted = new Redis(replica.url);
    stops.push(async () => void promoted.disconnect());
    expect(await promoted.call('ROLE')).toEqual(expect.arrayContaining(['master']));
    expect(await promoted.exists('area-metrics:broker:probe')).toBe(1);
  }, 60_000);
});
