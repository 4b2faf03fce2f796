import { mkdtempSync, renameSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveBrokerConfig } from '../../../src/broker/config/config.js';
import { buildBrokerApp, startBroker, type RunningBroker } from '../../../src/broker/http/server.js';
import { waitUntil } from '../../helpers/cli.js';
import { startFakeAuthServer, type FakeAuthRequest, type FakeAuthServer } from '../../helpers/fake-auth-server.js';
import { LogCapture, brokerFetch, injectedBroker, sleep, type TestBroker, useCleanups } from '../broker-harness.js';

const CLIENT_ID = 'production-client';
const OLD_SECRET = 'old-secret-value-1f2e';
const NEW_SECRET = 'new-secret-value-9a8b';
const APP = 'com.acme.shop';
const OTHER_APP = 'com.acme.other';

const stops = useCleanups();

async function authServer(): Promise<FakeAuthServer> {
  const auth = await startFakeAuthServer({ clientId: CLIENT_ID, clientSecret: OLD_SECRET });
  stops.push(() => auth.close());
  return auth;
}

function configOf(authUrl: string, extra: Record<string, unknown> = {}, platform: Record<string, unknown> = { clientSecretEnv: 'SECRET' }) {
  return resolveBrokerConfig(
    {
      authUrl,
      platforms: { android: { clientId: CLIENT_ID, ...platform } },
      applications: { [APP]: 'android', [OTHER_APP]: 'android' },
      ...extra,
    },
    { env: { SECRET: OLD_SECRET } },
  );
}

async function start(
  config: ReturnType<typeof configOf>,
  options: { hitSummaryIntervalMs?: number } = {},
): Promise<{ broker: RunningBroker; logs: LogCapture }> {
  const logs = new LogCapture();
  const broker = await startBroker(config, { port: 0, logStream: logs, ...options });
  stops.push(() => broker.close());
  return { broker, logs };
}

/** Through `inject`, for what does not need a socket. */
function injected(config: ReturnType<typeof configOf>): { broker: TestBroker; logs: LogCapture } {
  const broker = injectedBroker(config);
  stops.push(() => broker.close());
  return { broker, logs: broker.logs };
}

const fetch = brokerFetch;

const tokenUrl = (broker: { readonly url: string }, application = APP): string =>
  `${broker.url}/api/gatekeeper-token?application_package=${application}`;

describe('timeouts a load balancer expects', () => {
  it('sets keep-alive 65 s, the header and request timeouts 10 s by default on the server the fast path answers on', async () => {
    const built = buildBrokerApp(configOf('http://127.0.0.1:9'), { logStream: new LogCapture() });
    stops.push(() => built.close());
    await built.app.ready();
    expect(built.app.server.keepAliveTimeout).toBe(65_000);
    expect(built.app.server.headersTimeout).toBe(10_000);
    expect(built.app.server.requestTimeout).toBe(10_000);
    await built.app.close();
  });

  it('keeps an idle keep-alive connection for the configured time, and closes it after', async () => {
    const auth = await authServer();
    const { broker } = await start(configOf(auth.url, { server: { keepAliveTimeoutSeconds: 1.5 } }));
    // A raw socket, as a load balancer holds it: no client-side keep-alive heuristics in between.
    const socket = connect(Number(new URL(broker.url).port), '127.0.0.1');
    stops.push(async () => void socket.destroy());
    let received = '';
    socket.on('data', (chunk) => (received += String(chunk)));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    const ask = async (): Promise<string> => {
      received = '';
      socket.write(`GET /api/gatekeeper-token?application_package=${APP} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await waitUntil(() => received.includes('"access_token"'), 'the token answer on the raw socket', 3000);
      return received;
    };
    expect(await ask()).toMatch(/^HTTP\/1\.1 200/);
    await sleep(700); // idle, within the configured keep-alive: the idle time is what the test is about, not a race
    const second = await ask();
    expect(second).toMatch(/^HTTP\/1\.1 200/);
    expect(second).toMatch(/keep-alive: timeout=1/i);
    const idleFrom = Date.now();
    // Past the configured keep-alive the broker closes the idle connection.
    const closedAt = await closed;
    expect(closedAt - idleFrom).toBeGreaterThanOrEqual(1300);
    expect(closedAt - idleFrom).toBeLessThan(10_000); // the configured 1.5 s, not the default 65 s
  });

  it('answers 408 and closes when a client takes longer than the headers timeout to send its headers', async () => {
    const auth = await authServer();
    const { broker } = await start(configOf(auth.url, { server: { headersTimeoutSeconds: 0.3, requestTimeoutSeconds: 0.5 } }));
    const { port } = new URL(broker.url);
    const startedAt = Date.now();
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - startedAt).toBeLessThan(5000); // the 0.3 s headers timeout, not the default 10 s request timeout
  });
});

describe('rotation without restart', () => {
  /** An auth server that accepts only `accepted.secret` (changed by the test). */
  async function rotatingAuth(accepted: { secret: string }): Promise<FakeAuthServer> {
    const auth = await authServer();
    let serial = 0;
    auth.behave({
      respond: (request: FakeAuthRequest) =>
        request.authorization === `Basic ${Buffer.from(`${CLIENT_ID}:${accepted.secret}`).toString('base64')}`
          ? { status: 200, body: JSON.stringify({ access_token: `token-${(serial += 1)}`, expires_in: 3600 }) }
          : { status: 401, body: JSON.stringify({ error: 'invalid_client' }) },
    });
    return auth;
  }

  it('reads a rotated secret file (a Kubernetes ..data link swap) and reports each platform state in /readyz and /metrics', async () => {
    const accepted = { secret: NEW_SECRET };
    const auth = await rotatingAuth(accepted);
    // The layout Kubernetes mounts: secret → ..data/secret, ..data → a timestamped folder, swapped on update.
    const mount = mkdtempSync(join(tmpdir(), 'broker-secret-'));
    mkdirSync(join(mount, 'v1'));
    writeFileSync(join(mount, 'v1', 'secret'), `${OLD_SECRET}\n`);
    symlinkSync('v1', join(mount, '..data'));
    symlinkSync(join('..data', 'secret'), join(mount, 'secret'));
    const config = configOf(auth.url, {}, { clientSecretFile: join(mount, 'secret') });
    const { broker, logs } = injected(config);

    // The auth server already wants the new secret: 502, and the platform is reported as rejected.
    expect((await fetch(tokenUrl(broker))).status).toBe(502);
    const readyz = (await (await fetch(`${broker.url}/readyz`)).json()) as Record<string, unknown>;
    expect(readyz).toMatchObject({ status: 'ready', platforms: { android: 'rejected' } });
    const metrics = await (await fetch(`${broker.url}/metrics`)).text();
    expect(metrics).toContain('area_metrics_broker_platform_state{platform="android",state="rejected"} 1');
    expect(metrics).toContain('area_metrics_broker_platform_state{platform="android",state="ok"} 0');

    mkdirSync(join(mount, 'v2'));
    writeFileSync(join(mount, 'v2', 'secret'), `${NEW_SECRET}\n`);
    symlinkSync('v2', join(mount, '..data.tmp'));
    renameSync(join(mount, '..data.tmp'), join(mount, '..data'));
    await waitUntil(() => logs.text().includes('a secret file changed'), "the secret file's change in the logs", 5000);
    expect(logs.text()).toContain('a secret file changed');
    expect((await fetch(tokenUrl(broker))).status).toBe(200);
    expect(await (await fetch(`${broker.url}/readyz`)).json()).toMatchObject({ platforms: { android: 'ok' } });
    expect(logs.text()).not.toContain(NEW_SECRET);
    expect(logs.text()).not.toContain(OLD_SECRET);
  });

  it("asks again with the file's new secret when the auth server refuses the old one (no watch needed)", async () => {
    const accepted = { secret: OLD_SECRET };
    const auth = await rotatingAuth(accepted);
    const folder = mkdtempSync(join(tmpdir(), 'broker-secret-'));
    writeFileSync(join(folder, 'secret'), OLD_SECRET);
    const { broker } = injected(configOf(auth.url, {}, { clientSecretFile: join(folder, 'secret') }));
    expect((await fetch(tokenUrl(broker))).status).toBe(200);
    accepted.secret = NEW_SECRET;
    writeFileSync(join(folder, 'secret'), NEW_SECRET);
    // At once, before any watch could fire: the refusal makes the broker read the file and ask once more.
    expect((await fetch(tokenUrl(broker, OTHER_APP))).status).toBe(200);
    expect(auth.tokenRequests()).toBeLessThanOrEqual(3);
  });
});

describe('bounded logs', () => {
  it('cuts long paths, logs one line per kind of error per interval with the client, and sums up the rest', async () => {
    const auth = await authServer();
    const { broker, logs } = injected(configOf(auth.url, { server: { trustProxy: true } }));
    const longPath = `/${'x'.repeat(15_000)}`;
    for (let index = 0; index < 50; index++) {
      const response = await fetch(`${broker.url}${longPath}`, { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } });
      expect(response.status).toBe(404);
      expect((await response.text()).length).toBeLessThan(1000);
    }
    await broker.close(); // the summary of the interval is written at the latest when the broker stops
    const errorLines = logs.entries().filter((entry) => entry.status === 404);
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toMatchObject({ client: '203.0.113.7' });
    expect(String(errorLines[0]!.path).length).toBeLessThan(250);
    expect(logs.entries().find((entry) => entry.msg === 'errors not logged one by one')).toMatchObject({ errors: { '404 not-found': 49 } });
    expect(logs.text().length).toBeLessThan(5000);
  });

  it('takes the peer address, not X-Forwarded-For, when the proxy is not trusted', async () => {
    const auth = await authServer();
    const { broker, logs } = injected(configOf(auth.url));
    await fetch(`${broker.url}/nowhere`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
    await waitUntil(() => logs.entries().some((entry) => entry.status === 404), "the 404's log line", 5000);
    expect(logs.entries().find((entry) => entry.status === 404)).toMatchObject({ client: '127.0.0.1' });
  });
});

describe('limits', () => {
  it('answers 429 with Retry-After past the per-client rate, on the cached path and the route alike', async () => {
    const auth = await authServer();
    const { broker } = injected(configOf(auth.url, { limits: { perClientPerMinute: 4 } }));
    const statuses: number[] = [];
    for (let index = 0; index < 4; index++) statuses.push((await fetch(tokenUrl(broker))).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const refused = await fetch(tokenUrl(broker));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as Record<string, unknown>).type).toBe('urn:area-metrics:broker:problem:too-many-requests');
    expect((await fetch(tokenUrl(broker, OTHER_APP))).status).toBe(429); // a miss goes through fastify: same limit
    expect((await fetch(`${broker.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${broker.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${broker.url}/metrics`)).status).toBe(200);
  });

  it('answers 503 with Retry-After when the requests in flight reach the cap', async () => {
    const auth = await authServer();
    auth.behave({ delayMs: 400 });
    const { broker } = injected(configOf(auth.url, { limits: { maxInFlight: 2 } }));
    const waiting = [fetch(tokenUrl(broker)), fetch(tokenUrl(broker, OTHER_APP))];
    await waitUntil(() => auth.tokenRequests() === 2, 'both requests in flight at the auth server', 5000);
    const refused = await fetch(tokenUrl(broker));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as Record<string, unknown>).type).toBe('urn:area-metrics:broker:problem:overloaded');
    expect((await Promise.all(waiting)).map((response) => response.status)).toEqual([200, 200]);
    expect((await fetch(tokenUrl(broker))).status).toBe(200); // the places were given back
  });
});

describe('/metrics on its own port', () => {
  it('serves /metrics on server.metricsPort only', async () => {
    const auth = await authServer();
    const { broker } = await start(configOf(auth.url, { server: { metricsPort: 0 } }));
    expect(broker.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const metrics = await fetch(`${broker.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('area_metrics_broker_token_requests_total');
    expect((await fetch(`${broker.url}/metrics`)).status).toBe(404);
  });
});
