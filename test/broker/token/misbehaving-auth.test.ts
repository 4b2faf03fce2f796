import { describe, expect, it } from 'vitest';
import { resolveBrokerConfig, type BrokerConfig } from '../../../src/broker/config/config.js';
import { startBroker } from '../../../src/broker/http/server.js';
import { secretSpellings } from '../../../src/redact.js';
import { waitUntil } from '../../helpers/cli.js';
import { startFakeAuthServer, type FakeAuthBehaviour, type FakeAuthServer } from '../../helpers/fake-auth-server.js';
import { startRedis, useRedis, warnIfRedisMissing } from '../../helpers/redis.js';
import { LogCapture, TestClock, injectedBroker, sleep, untilRedisKnown, type TestBroker, useCleanups } from '../broker-harness.js';

// The auth server misbehaving, case by case, against a programmable auth server on loopback.
const CLIENT_ID = 'android-client';
const SECRET = 'S3cret-XYZ';
const APP = 'com.acme.shop';
const OTHER_APP = 'com.acme.other';

const stops = useCleanups();

interface Setup {
  readonly auth: FakeAuthServer;
  readonly broker: TestBroker;
  readonly logs: LogCapture;
}

interface SetupOptions {
  readonly secret?: string;
  readonly marginSeconds?: number;
  readonly authTimeoutSeconds?: number;
  readonly applications?: readonly string[];
  readonly redisUrl?: string;
  /** An auth server to share (several instances); default: a new one with `behaviour`. */
  readonly auth?: FakeAuthServer;
  readonly platforms?: Record<string, unknown>;
  /** The broker's clock (token lifetimes, back-offs); default real time. */
  readonly clock?: TestClock;
}

function configOf(authUrl: string, options: SetupOptions): BrokerConfig {
  const secret = options.secret ?? SECRET;
  const applications = Object.fromEntries((options.applications ?? [APP, OTHER_APP]).map((application) => [application, 'android']));
  return resolveBrokerConfig(
    {
      authUrl,
      platforms: { android: { clientId: CLIENT_ID, clientSecretEnv: 'ANDROID_SECRET' }, ...options.platforms },
      applications,
      cache: { marginSeconds: options.marginSeconds ?? 60, ...(options.redisUrl !== undefined ? { redisUrl: options.redisUrl } : {}) },
      // These tests send requests as fast as they can from one address: the per-client limit is not under test here.
      limits: { perClientPerMinute: 1_000_000 },
      ...(options.authTimeoutSeconds !== undefined ? { authTimeoutSeconds: options.authTimeoutSeconds } : {}),
    },
    { env: { ANDROID_SECRET: secret } },
  );
}

async function setup(behaviour: FakeAuthBehaviour = {}, options: SetupOptions = {}): Promise<Setup> {
  let auth = options.auth;
  if (auth === undefined) {
    const started = await startFakeAuthServer({ clientId: CLIENT_ID, clientSecret: options.secret ?? SECRET, ...behaviour });
    stops.push(() => started.close());
    auth = started;
  }
  const config = configOf(auth.url, options);
  // Through `inject`: every request reaches the fast path and fastify as on a socket, without one.
  const broker = injectedBroker(config, { lockPollMs: 10, ...(options.clock !== undefined ? { now: options.clock.now } : {}) });
  stops.push(() => broker.close());
  if (options.redisUrl !== undefined) await untilRedisKnown(broker.logs);
  return { auth, broker, logs: broker.logs };
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly ms: number;
}

async function get(broker: TestBroker, application = APP): Promise<Answer> {
  const startedAt = performance.now();
  const response = await broker.fetch(`/api/gatekeeper-token?application_package=${encodeURIComponent(application)}`);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ms: performance.now() - startedAt };
}

function json(answer: Answer): Record<string, unknown> {
  return JSON.parse(answer.text) as Record<string, unknown>;
}

/** Every log line is one JSON object, and none holds any spelling of the secret. */
function expectCleanLogs(logs: LogCapture, secret: string): void {
  for (const line of logs.lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  for (const spelling of secretSpellings({ clientId: CLIENT_ID, secret })) expect(logs.text()).not.toContain(spelling);
}

describe('1. secrets never reach the log, whatever the auth server echoes', () => {
  it('redacts every spelling of the secret from a 5xx body, a 401 description and the problem sent to the app', async () => {
    const secret = 'S3cret/XYZ+&=';
    const echo = (authorization: string | undefined): string =>
      [
        secret,
        encodeURIComponent(secret),
        new URLSearchParams({ s: secret }).toString().slice(2),
        authorization ?? '',
        Buffer.from(`${CLIENT_ID}:${encodeURIComponent(secret)}`).toString('base64'),
      ].join(' | ');
    const failing = await setup(
      { respond: () => ({ status: 500, body: JSON.stringify({ message: `client secret ${secret} is locked` }) }) },
      { secret },
    );
    const failed = await get(failing.broker);
    expect(failed.status).toBe(503);
    expect(failing.logs.text()).toMatch(/client secret \*\*\* is locked/);
    expectCleanLogs(failing.logs, secret);

    const echoing = await setup(
      {
        respond: ({ authorization }) => ({
          status: 401,
          body: JSON.stringify({ error: 'invalid_client', error_description: echo(authorization) }),
        }),
      },
      { secret },
    );
    const rejected = await get(echoing.broker);
    expect(rejected.status).toBe(502);
    expect(echoing.logs.text()).toMatch(/invalid_client/);
    expectCleanLogs(echoing.logs, secret);
    for (const spelling of secretSpellings({ clientId: CLIENT_ID, secret })) expect(rejected.text).not.toContain(spelling);
  });

  it('redacts the stale-token path: a valid token served while the auth server fails with a secret in its words', async () => {
    const clock = new TestClock();
    const { auth, broker, logs } = await setup({ jwt: false, ttlSeconds: 6 }, { marginSeconds: 2, clock });
    const first = json(await get(broker));
    auth.behave({ status: 503, body: JSON.stringify({ message: `secret ${SECRET} expired` }) });
    clock.advance(4100); // past the refresh point, still valid
    const stale = await get(broker);
    expect(stale.status).toBe(200);
    expect(json(stale).access_token).toBe(first.access_token);
    expect(logs.entries().some((entry) => entry.cache === 'stale')).toBe(true);
    expect(logs.text()).toMatch(/secret \*\*\* expired/);
    expectCleanLogs(logs, SECRET);
  });

  it('never prints a config value that is not a valid env var name or a path (it may be the secret itself)', async () => {
    const { logs } = await setup(
      {},
      {
        platforms: {
          ios: { clientId: 'ios-client', clientSecretEnv: 'ANDSECRET-q7x' },
          web: { clientId: 'web-client', clientSecretFile: 'hunter2-Secret!' },
          tv: { clientId: 'tv-client', clientSecretEnv: 'TV_SECRET_UNSET' },
        },
      },
    );
    const warnings = logs
      .entries()
      .filter((entry) => entry.config === true)
      .map((entry) => String(entry.msg));
    expect(warnings).toHaveLength(3);
    expect(logs.text()).not.toContain('ANDSECRET-q7x');
    expect(logs.text()).not.toContain('hunter2-Secret!');
    expect(warnings.join('\n')).toMatch(/platforms\.ios\.clientSecretEnv/);
    expect(warnings.join('\n')).toMatch(/TV_SECRET_UNSET is not set/); // a real variable name is still named
  });
});

describe('2. a huge expires_in is capped, never an invalid date or a flood', () => {
  it.each([[8_640_000_000_000], ['9223372036854775807']])(
    'expires_in %s: valid JSON, expires_in a day at most, one auth call',
    async (expiresIn) => {
      const { auth, broker, logs } = await setup({ expiresInValue: expiresIn, exp: false });
      const answers = await Promise.all(Array.from({ length: 30 }, () => get(broker)));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        const body = json(answer);
        expect(Number.isInteger(body.expires_in)).toBe(true);
        expect(body.expires_in).toBeGreaterThan(86_000);
        expect(body.expires_in).toBeLessThanOrEqual(86_400);
      }
      for (let i = 0; i < 20; i++) expect((await get(broker)).status).toBe(200);
      expect(auth.tokenRequests()).toBe(1);
      expect(logs.text().match(/validity of more than a day/g)).toHaveLength(1);
    },
  );
});

describe('3. 429 with Retry-After is backed off', () => {
  it('makes one auth call for a burst, and tells the apps the remaining Retry-After', async () => {
    const { auth, broker, logs } = await setup({ status: 429, headers: { 'retry-after': '60' }, body: '{"error":"slow_down"}' });
    const answers: Answer[] = [];
    for (let round = 0; round < 10; round++) answers.push(...(await Promise.all(Array.from({ length: 10 }, () => get(broker)))));
    expect(auth.tokenRequests()).toBe(1);
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(55);
      expect(Number(answer.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    }
    // The state change is logged once, not per request.
    expect(logs.text().match(/auth server failed; no calls for this platform/g)).toHaveLength(1);
  });
});

describe('4. short lifetimes are cached, not fetched per request', () => {
  it('a 30 s token with the 60 s margin: one auth call and one warning for 100 requests', async () => {
    const { auth, broker, logs } = await setup({ ttlSeconds: 30 });
    for (let round = 0; round < 10; round++) {
      for (const answer of await Promise.all(Array.from({ length: 10 }, () => get(broker)))) {
        expect(answer.status).toBe(200);
        expect(json(answer).expires_in).toBeGreaterThanOrEqual(1);
        expect(json(answer).expires_in).toBeLessThanOrEqual(30);
      }
    }
    expect(auth.tokenRequests()).toBe(1);
    expect(logs.text().match(/shorter than twice the cache margin/g)).toHaveLength(1);
  });

  it('an opaque token without expires_in: one auth call and one warning for 100 requests, served without expires_in', async () => {
    const { auth, broker, logs } = await setup({ jwt: false, expiresIn: false });
    for (let round = 0; round < 10; round++) {
      for (const answer of await Promise.all(Array.from({ length: 10 }, () => get(broker)))) {
        expect(answer.status).toBe(200);
        expect(Object.keys(json(answer))).toEqual(['access_token']);
      }
    }
    expect(auth.tokenRequests()).toBe(1);
    expect(logs.text().match(/neither expires_in nor exp/g)).toHaveLength(1);
  });
});

/**
 * Three clients asking at once (round robin over the brokers) at every 50 ms of the test clock from `fromMs` to
 * `untilMs` after `startedAt`: the clock jumps, real time hardly moves. Returns every answer.
 */
async function steadyTraffic(
  brokers: readonly TestBroker[],
  clock: TestClock,
  startedAt: number,
  fromMs: number,
  untilMs: number,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  let turn = 0;
  for (let at = fromMs; at < untilMs; at += 50) {
    clock.setTo(startedAt + at);
    answers.push(...(await Promise.all([0, 1, 2].map(() => get(brokers[turn++ % brokers.length]!)))));
  }
  return answers;
}

/** Until a line of the logs matches (an event of the broker, rather than a fixed wait). */
async function untilLogged(logs: readonly LogCapture[], pattern: RegExp, timeoutMs = 5000): Promise<void> {
  await waitUntil(() => logs.some((capture) => pattern.test(capture.text())), `a log line matching ${String(pattern)}`, timeoutMs);
}

describe('5. a valid token is served at once while the auth server hangs', () => {
  // A 6 s token with a 2 s margin: refreshed ahead from 2 s, past its refresh point at 4 s, discarded at 5 s. The
  // auth server hangs from the first token on; the auth timeout is 1 s (an answer that waited for it would take longer
  // than the 900 ms allowed, which leaves a busy machine room over the few ms an answer from memory takes), so the
  // refresh ahead started at 2.05 s fails at 3.05 s, before the refresh point: the test clock runs the token's life,
  // the timeout runs in real time, and the traffic waits for that failure between the two phases. (A longer auth
  // timeout is no way to more margin: it moves the failure against the token's life and the lock's.)
  const BACKOFF_LINE = /auth server failed; no calls for this platform during the back-off/;

  it('one instance: no answer waits for the hanging refresh, before or after the refresh point', async () => {
    const clock = new TestClock();
    const { auth, broker, logs } = await setup({ jwt: false, ttlSeconds: 6 }, { marginSeconds: 2, authTimeoutSeconds: 1, clock });
    const startedAt = clock.now();
    const first = json(await get(broker));
    auth.behave({ hang: true });
    const answers = await steadyTraffic([broker], clock, startedAt, 2050, 3050);
    await untilLogged([logs], BACKOFF_LINE);
    answers.push(...(await steadyTraffic([broker], clock, startedAt, 3050, 4700)));
    expect(answers.length).toBeGreaterThan(20);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(json(answer).access_token).toBe(first.access_token);
    }
    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(900);
    expect(auth.tokenRequests()).toBeLessThanOrEqual(3); // the first, the refresh ahead, at most one probe after the back-off
  });

  const redisMissing = warnIfRedisMissing('the multi-instance refresh-ahead test (test/broker/token/misbehaving-auth.test.ts)');
  describe.skipIf(redisMissing)('three instances on one Redis', () => {
    const redis = useRedis();

    it('lock losers neither wait nor call: every answer at once, one refresh call across the instances', async () => {
      const auth = await startFakeAuthServer({ clientId: CLIENT_ID, clientSecret: SECRET, jwt: false, ttlSeconds: 6 });
      stops.push(() => auth.close());
      const clock = new TestClock();
      const options = { auth, marginSeconds: 2, authTimeoutSeconds: 1, redisUrl: redis.url, clock };
      const instances = [await setup({}, options), await setup({}, options), await setup({}, options)];
      const brokers = instances.map((instance) => instance.broker);
      const startedAt = clock.now();
      const first = json(await get(brokers[0]!));
      auth.behave({ hang: true });
      for (const broker of brokers.slice(1)) expect(json(await get(broker)).access_token).toBe(first.access_token);
      expect(auth.tokenRequests()).toBe(1);
      const answers = await steadyTraffic(brokers, clock, startedAt, 2050, 3050);
      await untilLogged(
        instances.map((instance) => instance.logs),
        BACKOFF_LINE,
      );
      answers.push(...(await steadyTraffic(brokers, clock, startedAt, 3050, 4700)));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(json(answer).access_token).toBe(first.access_token);
      }
      expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(900);
      expect(auth.tokenRequests()).toBeLessThanOrEqual(3);
    });
  });
});

describe("6. the auth server's answer is bounded", () => {
  it('stops reading a 20 MB answer at 64 KB (502), while cached tokens of other applications are served', async () => {
    const { auth, broker } = await setup({}, { authTimeoutSeconds: 5 });
    expect((await get(broker, OTHER_APP)).status).toBe(200);
    auth.behave({ bodyBytes: 20 * 1024 * 1024 });
    const big = get(broker, APP);
    const hits = await Promise.all(Array.from({ length: 20 }, () => get(broker, OTHER_APP)));
    const answer = await big;
    expect(answer.status).toBe(502);
    expect(json(answer).type).toBe('urn:area-metrics:broker:problem:auth-server-invalid-response');
    expect(hits.every((hit) => hit.status === 200)).toBe(true);
    await waitUntil(() => auth.bodies[0]?.cutOff === true, 'the auth server seeing its answer cut off', 5000);
    expect(auth.bodies).toHaveLength(1);
    expect(auth.bodies[0]!.written).toBeLessThan(auth.bodies[0]!.total);
    expect(auth.bodies[0]!.cutOff).toBe(true);
  });
});

describe('7. waiting for a connection does not eat the auth timeout', () => {
  // The auth server answers in a third of the timeout: calls queued for a connection (a pool of ten would make five
  // rounds) would run out of time.
  it('41 cold applications, an auth server answering in 0.4 s and a 1.2 s timeout: every one gets its token', async () => {
    const applications = Array.from({ length: 41 }, (_, index) => `com.acme.app${index}`);
    const { auth, broker } = await setup({ delayMs: 400 }, { applications, authTimeoutSeconds: 1.2 });
    const answers = await Promise.all(applications.map((application) => get(broker, application)));
    expect(answers.map((answer) => answer.status)).toEqual(applications.map(() => 200));
    expect(auth.tokenRequests()).toBe(41);
  });
});

/** A request of any method (TRACE too), with a body when given. */
async function rawRequest(
  broker: TestBroker,
  url: string,
  method: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; allow?: string }> {
  const response = await broker.fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const allow = response.headers.get('allow');
  return { status: response.status, ...(allow !== null ? { allow } : {}) };
}

describe('8. the smaller cases', () => {
  it('answers 405 with Allow: GET, OPTIONS for every other method on the token route, whatever the body', async () => {
    const { broker } = await setup();
    const url = `/api/gatekeeper-token?application_package=${APP}`;
    const answers = await Promise.all([
      rawRequest(broker, url, 'POST', '{not json', { 'content-type': 'application/json' }),
      rawRequest(broker, url, 'PUT', 'x'.repeat(2 * 1024 * 1024), { 'content-type': 'application/octet-stream' }),
      rawRequest(broker, url, 'PATCH', 'a=1', { 'content-type': 'text/x-unknown' }),
      rawRequest(broker, url, 'TRACE'),
      rawRequest(broker, url, 'DELETE'),
    ]);
    expect(answers).toEqual(answers.map(() => ({ status: 405, allow: 'GET, OPTIONS' })));
  });

  it('answers 502 for a redirect from the auth server', async () => {
    const { broker } = await setup({ status: 302, headers: { location: 'https://elsewhere.example/oauth2/token' }, body: '' });
    const answer = await get(broker);
    expect(answer.status).toBe(502);
    expect(json(answer).type).toBe('urn:area-metrics:broker:problem:auth-server-invalid-response');
  });

  it('never serves a token whose exp is past, nor one with less than a second left (expires_in is never 0)', async () => {
    const past = await setup({ expClaim: Math.floor(Date.now() / 1000) - 10 });
    const answer = await get(past.broker);
    expect(answer.status).toBe(502);
    expect(past.logs.text()).toMatch(/already expired/);

    const clock = new TestClock();
    const { broker } = await setup({ jwt: false, ttlSeconds: 2 }, { marginSeconds: 0, clock });
    const startedAt = clock.now();
    const seen: unknown[] = [];
    // 2.5 s of the token's life, a request every 20 ms of it: past its end, a new one is fetched.
    while (clock.now() - startedAt < 2500) {
      const next = await get(broker);
      expect(next.status).toBe(200);
      seen.push(json(next).expires_in);
      clock.advance(20);
    }
    expect(seen.every((value) => Number.isInteger(value) && (value as number) >= 1)).toBe(true);
  });

  it('keeps every log line one line: U+2028 and U+2029 in an application_package are escaped', async () => {
    const { broker, logs } = await setup();
    expect((await get(broker, 'com.acme\u2028{"level":"fatal"}\u2029x')).status).toBe(400);
    await waitUntil(() => logs.lines.some((candidate) => candidate.includes('unknown-application')), "the request's log line", 5000);
    const line = logs.lines.find((candidate) => candidate.includes('unknown-application'));
    expect(line).toBeDefined();
    expect(line).not.toMatch(/[\u2028\u2029]/);
    expect(line).toContain('\\u2028');
    expect((JSON.parse(line!) as { application: string }).application).toBe('com.acme\u2028{"level":"fatal"}\u2029x');
  });

  const redisMissing = warnIfRedisMissing("the broker's clean-stop Redis log test");
  it.skipIf(redisMissing)('logs no Redis outage after a clean stop', async () => {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const auth = await startFakeAuthServer({ clientId: CLIENT_ID, clientSecret: SECRET });
    stops.push(() => auth.close());
    // Listening: the stop under test is the listener's drain and close.
    const logs = new LogCapture();
    const broker = await startBroker(configOf(auth.url, { redisUrl: redis.url }), { port: 0, logStream: logs });
    stops.push(() => broker.close());
    await untilRedisKnown(logs);
    expect(logs.text()).toMatch(/Redis connected/);
    await broker.close();
    await waitUntil(() => logs.text().includes('broker stopped'), "the broker's stop line", 5000);
    await sleep(200); // a negative check: no Redis outage is logged in the time a reconnect attempt would take
    const messages = logs.entries().map((entry) => String(entry.msg));
    expect(messages.at(-1)).toBe('broker stopped');
    expect(messages.join('\n')).not.toMatch(/Redis unavailable/);
  });
});
