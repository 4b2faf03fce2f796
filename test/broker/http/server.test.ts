import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBroker } from '../../../src/broker/http/server.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { waitUntil } from '../../helpers/cli.js';
import { startFakeAuthServer, type FakeAuthServer } from '../../helpers/fake-auth-server.js';
import {
  ANDROID_APP,
  BROKEN_WEB_APP,
  IOS_APP,
  type LogCapture,
  TestClock,
  type TestBroker,
  WEB_APP,
  brokerFetch,
  injectTestBroker,
  sleep,
  startTestBroker,
  tokenUrl,
  verifyHs256,
} from '../broker-harness.js';

const CLIENT_SECRET = 'sandbox-secret-for-broker-tests-7f3a';
const CLIENT_ID = 'broker-test-client';

// Every broker and sandbox a test starts is closed after it; every log and every token is kept for the final check.
const cleanups: (() => Promise<void>)[] = [];
const allLogs: LogCapture[] = [];
const issuedTokens = new Set<string>();

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function sandbox(tokenTtlSeconds = 3600): Promise<Sandbox> {
  const started = await startSandbox({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenTtlSeconds, stores: 1, days: 1 });
  cleanups.push(() => started.close());
  return started;
}

/** An auth server of our own whose tokens' `iat` and `exp` follow the test's clock (the sandbox's follow real time). */
async function clockedAuth(clock: TestClock, ttlSeconds: number): Promise<FakeAuthServer> {
  const started = await startFakeAuthServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ttlSeconds, now: clock.now });
  cleanups.push(() => started.close());
  return started;
}

/** A broker driven through `inject` (no socket): each request goes through the fast path and fastify as on a socket. */
async function broker(
  authUrl: string,
  options: { marginSeconds?: number; authTimeoutSeconds?: number; clientSecret?: string; clock?: TestClock } = {},
): Promise<{ broker: TestBroker; logs: LogCapture }> {
  const { clock, ...fixture } = options;
  const started = await injectTestBroker(
    { authUrl, clientId: CLIENT_ID, clientSecret: options.clientSecret ?? CLIENT_SECRET, ...fixture },
    clock !== undefined ? { now: clock.now } : {},
  );
  cleanups.push(() => started.close());
  allLogs.push(started.logs);
  return { broker: started, logs: started.logs };
}

/** A broker listening on a socket, for what only a socket shows (Node's header merging, a close in flight). */
async function listeningBroker(authUrl: string): Promise<{ broker: RunningBroker; logs: LogCapture }> {
  const started = await startTestBroker({ authUrl, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  cleanups.push(() => started.broker.close());
  allLogs.push(started.logs);
  return started;
}

async function getToken(
  url: string,
  init?: { method?: string; headers?: Record<string, string> },
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await brokerFetch(url, init);
  const text = await response.text();
  const body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  if (typeof body.access_token === 'string') issuedTokens.add(body.access_token);
  return { status: response.status, headers: response.headers, body };
}

function expectProblem(result: { status: number; headers: Headers; body: Record<string, unknown> }, status: number, kind: string): void {
  expect(result.status).toBe(status);
  expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(result.headers.get('cache-control')).toBe('no-store');
  expect(result.body).toEqual({
    type: `urn:area-metrics:broker:problem:${kind}`,
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });
}

describe('GET /api/gatekeeper-token against the sandbox auth server', () => {
  it('answers 200 {access_token, expires_in} with no-store, the same shape from the auth server and from the cache', async () => {
    const auth = await sandbox(3600);
    const { broker: running, logs } = await broker(auth.url);
    const first = await getToken(tokenUrl(running, ANDROID_APP));
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(first.body)).toEqual(['access_token', 'expires_in']);
    expect(first.body.expires_in).toBeGreaterThan(3590);
    expect(first.body.expires_in).toBeLessThanOrEqual(3600);
    const claims = verifyHs256(first.body.access_token as string, auth.tokenSigningKey);
    expect(claims.sub).toBe(CLIENT_ID);

    const second = await getToken(tokenUrl(running, ANDROID_APP));
    expect(second.status).toBe(200);
    expect(Object.keys(second.body)).toEqual(['access_token', 'expires_in']);
    expect(second.body.access_token).toBe(first.body.access_token);
    expect(auth.tokenRequests()).toBe(1); // the second came from the cache

    // Another application is another cache entry: tokens are cached per application_package.
    const web = await getToken(tokenUrl(running, WEB_APP));
    expect(web.body.access_token).not.toBe(first.body.access_token);
    expect(auth.tokenRequests()).toBe(2);

    // At the default level a cache hit has no line of its own: it is counted in the `cache hits` summary.
    const completed = logs.entries().filter((entry) => entry.msg === 'request completed');
    expect(completed.map((entry) => [entry.level, entry.cache])).toEqual([
      ['info', 'miss'],
      ['info', 'miss'],
    ]);
    expect(completed[0]).toMatchObject({
      application: ANDROID_APP,
      status: 200,
      authLatencyMs: expect.any(Number),
      reqId: expect.any(String),
    });
    await running.close();
    expect(logs.entries().filter((entry) => entry.msg === 'cache hits')).toEqual([
      expect.objectContaining({ level: 'info', cacheHits: 1, applications: { [ANDROID_APP]: 1 }, maxResponseTimeMs: expect.any(Number) }),
    ]);
  });

  it('answers a miss (through fastify) and a memory hit (answered before fastify) with the same headers', async () => {
    const auth = await sandbox(3600);
    const { broker: running } = await broker(auth.url);
    const origin = `https://${WEB_APP}`;
    const headersOf = (result: { headers: Headers }): Record<string, string> => {
      const kept = Object.fromEntries([...result.headers].filter(([name]) => !['date', 'content-length', 'x-request-id'].includes(name)));
      expect(result.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      return kept;
    };
    const miss = await getToken(tokenUrl(running, WEB_APP), { headers: { origin } });
    const hit = await getToken(tokenUrl(running, WEB_APP), { headers: { origin } });
    expect(auth.tokenRequests()).toBe(1);
    expect(headersOf(hit)).toEqual(headersOf(miss));
    expect(headersOf(hit)).toMatchObject({
      'cache-control': 'no-store',
      'content-type': 'application/json; charset=utf-8',
      vary: 'Origin',
      'access-control-allow-origin': origin,
    });
    expect(hit.headers.get('pragma')).toBeNull(); // no-store is the rule; the HTTP/1.0 header is not sent
    const echoed = await getToken(tokenUrl(running, WEB_APP), { headers: { 'x-request-id': 'lb-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('lb-42');
    expect(echoed.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves a hit for any spelling of the application, and gives repeated Origin or X-Request-Id the usual merging', async () => {
    const auth = await sandbox(3600);
    // On a socket: repeated headers are merged by Node's parser, which is what this is about.
    const { broker: running } = await listeningBroker(auth.url);
    const first = await getToken(tokenUrl(running, WEB_APP));
    const base = `${running.url}/api/gatekeeper-token?application_package=`;
    const spelled = WEB_APP.replaceAll('.', '%2E');
    for (let round = 0; round < 3; round++) {
      const other = await getToken(`${base}${spelled}`);
      expect(other.status).toBe(200);
      expect(other.body.access_token).toBe(first.body.access_token);
    }
    expect((await getToken(`${base}${WEB_APP}&application_package=${WEB_APP}`)).status).toBe(400);
    expect(auth.tokenRequests()).toBe(1);

    // Repeated headers, sent raw: Node joins them with ", ", which is neither an origin nor a valid id.
    const raw = (headers: Record<string, string | string[]>): Promise<IncomingHttpHeaders> =>
      new Promise((resolve, reject) => {
        const request = httpRequest(`${base}${WEB_APP}`, { headers }, (response) => {
          expect(response.statusCode).toBe(200);
          response.resume();
          response.on('end', () => resolve(response.headers));
        });
        request.on('error', reject).end();
      });
    const twoOrigins = await raw({ origin: [`https://${WEB_APP}`, 'https://evil.example'], 'x-request-id': ['id-1', 'id-2'] });
    expect(twoOrigins['access-control-allow-origin']).toBeUndefined();
    expect(twoOrigins['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const once = await raw({ Origin: `https://${WEB_APP}`, 'X-Request-ID': 'id-3' });
    expect(once['access-control-allow-origin']).toBe(`https://${WEB_APP}`);
    expect(once['x-request-id']).toBe('id-3');
  });

  it('logs each cache hit at debug with its request id, and sums them up at info every interval', async () => {
    const auth = await sandbox(3600);
    const running = await injectTestBroker(
      { authUrl: auth.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
      { logLevel: 'debug', hitSummaryIntervalMs: 50 },
    );
    const logs = running.logs;
    cleanups.push(() => running.close());
    allLogs.push(logs);
    await getToken(tokenUrl(running, ANDROID_APP));
    await getToken(tokenUrl(running, ANDROID_APP), { headers: { 'x-request-id': 'hit-1' } });
    await getToken(tokenUrl(running, WEB_APP));
    await getToken(tokenUrl(running, WEB_APP));
    await getToken(tokenUrl(running, ANDROID_APP), { method: 'HEAD' });
    const completed = logs.entries().filter((entry) => entry.msg === 'request completed');
    expect(completed.map((entry) => [entry.level, entry.cache])).toEqual([
      ['info', 'miss'],
      ['debug', 'hit'],
      ['info', 'miss'],
      ['debug', 'hit'],
      ['debug', 'hit'],
    ]);
    expect(completed[1]).toMatchObject({ reqId: 'hit-1', application: ANDROID_APP, status: 200, path: '/api/gatekeeper-token' });
    // The hits may fall into two 50 ms windows: together they count each hit once.
    const hitsSummarized = (): number =>
      logs.entries().reduce((sum, entry) => sum + (entry.msg === 'cache hits' ? (entry.cacheHits as number) : 0), 0);
    await waitUntil(() => hitsSummarized() >= 3, 'cache-hit summaries counting the 3 hits', 5000);
    const summaries = logs.entries().filter((entry) => entry.msg === 'cache hits');
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    for (const summary of summaries) {
      expect(summary).toMatchObject({ level: 'info', windowSeconds: expect.any(Number), meanResponseTimeMs: expect.any(Number) });
    }
    const perApplication: Record<string, number> = {};
    for (const summary of summaries) {
      for (const [application, count] of Object.entries(summary.applications as Record<string, number>)) {
        perApplication[application] = (perApplication[application] ?? 0) + count;
      }
    }
    expect(summaries.reduce((sum, summary) => sum + (summary.cacheHits as number), 0)).toBe(3);
    expect(perApplication).toEqual({ [ANDROID_APP]: 2, [WEB_APP]: 1 });
    await sleep(120); // a negative check: two more 50 ms windows pass with no hits, and they print no line
    expect(logs.entries().filter((entry) => entry.msg === 'cache hits')).toHaveLength(summaries.length); // no hits, no line
  });

  it('answers 400 problems for a missing, empty, too long, control-character, repeated or unknown application_package', async () => {
    const auth = await sandbox();
    const { broker: running } = await broker(auth.url);
    expectProblem(await getToken(tokenUrl(running)), 400, 'missing-application-package');
    expectProblem(await getToken(tokenUrl(running, '')), 400, 'invalid-application-package');
    expectProblem(await getToken(tokenUrl(running, 'a'.repeat(256))), 400, 'invalid-application-package');
    expectProblem(await getToken(`${tokenUrl(running)}?application_package=com.acme%01shop`), 400, 'invalid-application-package');
    expectProblem(
      await getToken(`${tokenUrl(running)}?application_package=${ANDROID_APP}&application_package=${WEB_APP}`),
      400,
      'invalid-application-package',
    );
    const unknown = await getToken(tokenUrl(running, 'com.unknown.app'));
    expectProblem(unknown, 400, 'unknown-application');
    expect(unknown.body.detail).toContain('com.unknown.app');
    expect(auth.tokenRequests()).toBe(0);
  });

  it("never logs the first part of a secret that a long value's cut would split", async () => {
    const auth = await sandbox();
    const { broker: running, logs } = await broker(auth.url);
    // A client who knows the secret sends it where the log's 200-character cut of the value falls inside it.
    for (const before of [190, 195, 199]) {
      const result = await getToken(tokenUrl(running, `${'a'.repeat(before)}${CLIENT_SECRET}${'b'.repeat(20)}`));
      expect(result.status).toBeGreaterThanOrEqual(400);
    }
    expect(logs.text()).toContain('chars)');
    expect(logs.text()).not.toContain(CLIENT_SECRET.slice(0, 4));
  });

  it('answers 401 for an application whose platform has no usable credentials', async () => {
    const auth = await sandbox();
    const { broker: running, logs } = await broker(auth.url);
    const result = await getToken(tokenUrl(running, IOS_APP));
    expectProblem(result, 401, 'credentials-not-configured');
    expect(JSON.stringify(result.body)).not.toContain('TEST_IOS_SECRET_UNSET');
    expect(auth.tokenRequests()).toBe(0);
    expect(logs.text()).toMatch(/platforms\.ios: environment variable TEST_IOS_SECRET_UNSET is not set/);
  });

  it('answers 502 when the auth server rejects the credentials, without naming the auth server', async () => {
    const auth = await sandbox();
    const { broker: running, logs } = await broker(auth.url, { clientSecret: 'wrong-secret-value' });
    const result = await getToken(tokenUrl(running, ANDROID_APP));
    expectProblem(result, 502, 'auth-server-rejected');
    expect(JSON.stringify(result.body)).not.toContain(auth.url);
    // The operator sees the auth server's own reason in the log.
    expect(logs.text()).toMatch(/invalid_client/);
    // The platform's auth server is left alone for a while: the next request gets the same answer without a call.
    expectProblem(await getToken(tokenUrl(running, ANDROID_APP)), 502, 'auth-server-rejected');
    expect(auth.tokenRequests()).toBe(1);
  });

  it('answers 503 with Retry-After when the auth server fails with 5xx, times out or refuses connections', async () => {
    const auth = await sandbox();
    const { broker: running } = await broker(auth.url, { authTimeoutSeconds: 0.3 });
    auth.setFaults({ tokenFailNth: { n: 1, status: 500 } });
    const failed = await getToken(tokenUrl(running, ANDROID_APP));
    expectProblem(failed, 503, 'auth-server-unavailable');
    expect(failed.headers.get('retry-after')).toMatch(/^\d+$/);

    auth.setFaults({ tokenLatencyMs: 1500 });
    const slow = await getToken(tokenUrl(running, ANDROID_APP));
    expectProblem(slow, 503, 'auth-server-unavailable');
    expect(slow.headers.get('retry-after')).toMatch(/^\d+$/);

    auth.setFaults({});
    await auth.close();
    const refused = await getToken(tokenUrl(running, ANDROID_APP));
    expectProblem(refused, 503, 'auth-server-unavailable');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('refreshes a token near its end: the next request after the refresh point gets a new one (short token ttl)', async () => {
    const clock = new TestClock();
    const auth = await clockedAuth(clock, 4);
    const { broker: running } = await broker(auth.url, { marginSeconds: 2, clock });
    const first = await getToken(tokenUrl(running, ANDROID_APP));
    expect(first.body.expires_in).toBeLessThanOrEqual(4);
    expect((await getToken(tokenUrl(running, ANDROID_APP))).body.access_token).toBe(first.body.access_token);
    expect(auth.tokenRequests()).toBe(1);
    clock.advance(2100); // past the refresh-ahead point, whatever the JWT's whole-second exp rounding
    expect((await getToken(tokenUrl(running, ANDROID_APP))).status).toBe(200); // the cached token or already the new one
    let refreshed = await getToken(tokenUrl(running, ANDROID_APP));
    await waitUntil(
      async () => {
        if (refreshed.body.access_token !== first.body.access_token) return true;
        refreshed = await getToken(tokenUrl(running, ANDROID_APP));
        return false;
      },
      'a new token after the refresh point',
      5000,
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(first.body.access_token);
    expect(auth.tokenRequests()).toBe(2);
  });

  it('keeps serving a token in its margin when the auth server has stopped, with its true expires_in', async () => {
    const clock = new TestClock();
    const auth = await clockedAuth(clock, 8);
    const { broker: running, logs } = await broker(auth.url, { marginSeconds: 3, clock });
    const first = await getToken(tokenUrl(running, ANDROID_APP));
    // Now past the refresh point (validity minus 3 s), still valid for more than a second: the JWT's exp is whole
    // seconds, so the validity is between 7 and 8 s.
    clock.advance(5100);
    await auth.close();
    const stale = await getToken(tokenUrl(running, ANDROID_APP));
    expect(stale.status).toBe(200);
    expect(stale.body.access_token).toBe(first.body.access_token);
    expect(stale.body.expires_in).toBeLessThan(first.body.expires_in as number);
    expect(stale.body.expires_in).toBeGreaterThan(0);
    expect(logs.entries().some((entry) => entry.cache === 'stale')).toBe(true);
    expect(logs.text()).toMatch(/auth server failed; no calls for this platform during the back-off/);
  });

  it('makes one auth request for 200 concurrent cold requests', async () => {
    const auth = await sandbox();
    auth.setFaults({ tokenLatencyMs: 150 });
    const { broker: running } = await broker(auth.url);
    const results = await Promise.all(Array.from({ length: 200 }, () => getToken(tokenUrl(running, ANDROID_APP))));
    expect(results.every((result) => result.status === 200)).toBe(true);
    expect(new Set(results.map((result) => result.body.access_token)).size).toBe(1);
    expect(auth.tokenRequests()).toBe(1);
  });
});

describe('CORS', () => {
  let auth: Sandbox;
  let running: TestBroker;
  beforeAll(async () => {
    auth = await startSandbox({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, stores: 1, days: 1 });
    running = await injectTestBroker({ authUrl: auth.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    allLogs.push(running.logs);
  });
  afterAll(async () => {
    await running.close();
    await auth.close();
  });

  const origin = (application: string): string => `https://${application}`;

  it("lets a web application's own origin read the token, errors and the preflight", async () => {
    const ok = await getToken(tokenUrl(running, WEB_APP), { headers: { origin: origin(WEB_APP) } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(origin(WEB_APP));
    expect(ok.headers.get('vary')).toMatch(/Origin/);

    // Retry-After is not CORS-safelisted: without Access-Control-Expose-Headers a page could not honour a 503's.
    expect(ok.headers.get('access-control-expose-headers')).toBe('Retry-After, X-Request-Id');

    const unauthorized = await getToken(tokenUrl(running, BROKEN_WEB_APP), { headers: { origin: origin(BROKEN_WEB_APP) } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(origin(BROKEN_WEB_APP));
    expect(unauthorized.headers.get('access-control-expose-headers')).toBe('Retry-After, X-Request-Id');

    const preflight = await brokerFetch(tokenUrl(running, WEB_APP), {
      method: 'OPTIONS',
      headers: { origin: origin(WEB_APP), 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin(WEB_APP));
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET');
    expect(preflight.headers.get('vary')).toMatch(/Origin/);
  });

  it('gives no CORS headers to other origins, to the web origin asking for another application, or to non-web apps', async () => {
    const cases: [string, string][] = [
      [WEB_APP, 'https://evil.example'],
      [WEB_APP, `http://${WEB_APP}`],
      [WEB_APP, `https://${WEB_APP}.evil.example`],
      [ANDROID_APP, origin(WEB_APP)],
      [ANDROID_APP, origin(ANDROID_APP)],
      ['com.unknown.app', origin('com.unknown.app')],
    ];
    for (const [application, requestOrigin] of cases) {
      const result = await getToken(tokenUrl(running, application), { headers: { origin: requestOrigin } });
      const corsHeaders = [...result.headers.keys()].filter((name) => name.startsWith('access-control-'));
      expect(corsHeaders, `${requestOrigin} asking for ${application}`).toEqual([]);
      const preflight = await brokerFetch(tokenUrl(running, application), {
        method: 'OPTIONS',
        headers: { origin: requestOrigin, 'access-control-request-method': 'GET' },
      });
      expect([...preflight.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
  });
});

describe('service endpoints and logs', () => {
  it('answers /healthz and /readyz, a problem for unknown paths, and echoes a request id into the logs', async () => {
    const auth = await sandbox();
    const { broker: running, logs } = await broker(auth.url);
    const health = await brokerFetch(new URL('/healthz', running.url));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await brokerFetch(new URL('/readyz', running.url));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', cache: 'memory' });
    const missing = await getToken(new URL('/nope', running.url).toString());
    expectProblem(missing, 404, 'not-found');

    const post = await getToken(tokenUrl(running, ANDROID_APP), { method: 'POST' });
    expectProblem(post, 405, 'method-not-allowed');
    expect(post.headers.get('allow')).toBe('GET, OPTIONS');

    const malformed = await getToken(new URL('/api/%E0%A4%A', running.url).toString(), { headers: { 'x-request-id': 'bad-url-1' } });
    expectProblem(malformed, 400, 'malformed-url');
    expect(malformed.headers.get('x-request-id')).toBe('bad-url-1');
    expect(logs.entries().find((entry) => entry.reqId === 'bad-url-1')).toMatchObject({
      path: '/api/%E0%A4%A',
      status: 400,
      problem: 'malformed-url',
    });

    const traced = await brokerFetch(tokenUrl(running, ANDROID_APP), { headers: { 'x-request-id': 'trace-1234' } });
    expect(traced.headers.get('x-request-id')).toBe('trace-1234');
    const forged = await brokerFetch(tokenUrl(running, ANDROID_APP), { headers: { 'x-request-id': 'bad id\twith tab' } });
    expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(logs.entries().find((entry) => entry.reqId === 'trace-1234')).toMatchObject({
      msg: 'request completed',
      application: ANDROID_APP,
      cache: 'miss',
      status: 200,
    });
  });

  it('finishes an in-flight request when closed, then stops accepting connections', async () => {
    const auth = await sandbox();
    auth.setFaults({ tokenLatencyMs: 400 });
    const { broker: running } = await listeningBroker(auth.url);
    const inFlight = getToken(tokenUrl(running, ANDROID_APP));
    await waitUntil(() => auth.tokenRequests() === 1, 'the in-flight request reaching the auth server', 5000);
    const closing = running.close();
    const result = await inFlight;
    expect(result.status).toBe(200);
    await closing;
    await expect(fetch(tokenUrl(running, ANDROID_APP))).rejects.toThrow();
  });
});

afterAll(() => {
  // Secrets and tokens never reach the logs (checked over every line every broker in this file wrote).
  const text = allLogs.map((logs) => logs.text()).join('\n');
  expect(text.length).toBeGreaterThan(0);
  expect(issuedTokens.size).toBeGreaterThan(3);
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toContain('wrong-secret-value');
  for (const token of issuedTokens) {
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[2]!);
  }
});
