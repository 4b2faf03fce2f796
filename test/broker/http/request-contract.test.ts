import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveBrokerConfig, type BrokerConfig, type PlatformCredentials } from '../../../src/broker/config/config.js';
import type { FetchedToken, TokenSource } from '../../../src/broker/token/token-source.js';
import { waitUntil } from '../../helpers/cli.js';
import { startRedis, warnIfRedisMissing } from '../../helpers/redis.js';
import { ANDROID_APP_ID, IOS_APP_ID, PROJECT_NUMBER, appCheckClaims, issuerKey, signToken, startIssuer } from '../attestation-issuer.js';
import { injectedBroker, untilRedisKnown, type TestBroker } from '../broker-harness.js';

// One contract for every token request: the fast path (a fresh token in memory, answered before fastify) and the
// fastify route must answer, count and log a request the same way. The same table of requests goes through a broker
// with its fast path and through one without, and everything they answer, count and log is compared.

const APP = 'com.acme.shop';
const WEB_APP = 'shop.acme.example';
const SLOW_APP = 'com.acme.slow';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb250cmFjdCJ9.c2lnbmF0dXJl';
const NOW = Date.parse('2026-03-01T12:00:00Z');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

/** Tokens valid for an hour at the frozen clock; the `slow` platform's wait until the test releases them. */
function tokenSource(): TokenSource & { release(): void; holding(): boolean } {
  let release: () => void = () => undefined;
  let holding = false;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    release,
    holding: () => holding,
    fetch: async (platform: PlatformCredentials): Promise<FetchedToken> => {
      if (platform.name === 'slow') {
        holding = true;
        await released;
      }
      return { accessToken: TOKEN, expiresAt: NOW + 3_600_000 };
    },
    close: async () => undefined,
  };
}

function config(extra: Record<string, unknown> = {}): BrokerConfig {
  const platform = { clientId: 'contract-client', clientSecretEnv: 'CONTRACT_SECRET' };
  return resolveBrokerConfig(
    {
      authUrl: 'http://127.0.0.1:9',
      platforms: { android: platform, web: platform, slow: platform },
      applications: { [APP]: 'android', [WEB_APP]: 'web', [SLOW_APP]: 'slow' },
      server: { trustProxy: true },
      limits: { perClientPerMinute: 2, maxInFlight: 1 },
      ...extra,
    },
    { env: { CONTRACT_SECRET: 'contract-secret-value' } },
  );
}

interface Sent {
  readonly path: string;
  readonly headers: Record<string, string>;
}

/** Each row's requests come from a client of their own (X-Forwarded-For, trusted), so rows do not share a rate. */
const ROWS: readonly { readonly name: string; readonly requests: readonly Sent[] }[] = [
  {
    name: 'a plain hit',
    requests: [{ path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '198.51.100.1', 'x-request-id': 'row-1' } }],
  },
  {
    name: 'a request id of its own, echoed',
    requests: [{ path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '198.51.100.2', 'x-request-id': 'lb-42' } }],
  },
  {
    name: 'a request id that is not one, replaced',
    requests: [{ path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '198.51.100.3', 'x-request-id': 'bad id' } }],
  },
  {
    name: 'the web application from its own origin (CORS)',
    requests: [{ path: `?application_package=${WEB_APP}`, headers: { 'x-forwarded-for': '198.51.100.4', origin: `https://${WEB_APP}` } }],
  },
  {
    name: 'the web application from another origin',
    requests: [{ path: `?application_package=${WEB_APP}`, headers: { 'x-forwarded-for': '198.51.100.5', origin: 'https://evil.example' } }],
  },
  {
    name: 'another spelling of the application',
    requests: [{ path: `?application_package=${APP.replaceAll('.', '%2E')}`, headers: { 'x-forwarded-for': '198.51.100.6' } }],
  },
  {
    name: 'a client past its rate: 429, counted and logged with the client',
    requests: [1, 2, 3].map((n) => ({
      path: `?application_package=${APP}`,
      headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1', 'x-request-id': `rate-${n}` },
    })),
  },
];

interface Seen {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}

/** An answer without what differs between any two answers: the date, a generated request id, the rate's countdown. */
function seen(answer: Awaited<ReturnType<TestBroker['inject']>>): Seen {
  const { date: _date, ...headers } = answer.headers;
  if (typeof headers['x-request-id'] === 'string' && UUID.test(headers['x-request-id'])) headers['x-request-id'] = '(generated)';
  if (answer.statusCode === 429) {
    expect(Number(headers['retry-after'])).toBeGreaterThan(0);
    headers['retry-after'] = '(seconds)';
  }
  return { status: answer.statusCode, headers, body: answer.body };
}

/** The `request completed` lines without their timing (and a generated request id). */
function completedLines(broker: TestBroker): Record<string, unknown>[] {
  return broker.logs
    .entries()
    .filter((entry) => entry.msg === 'request completed' && entry.path === '/api/gatekeeper-token')
    .map(({ time: _time, responseTimeMs, reqId, ...line }) => {
      expect(responseTimeMs).toEqual(expect.any(Number));
      return { ...line, reqId: typeof reqId === 'string' && UUID.test(reqId) ? '(generated)' : reqId };
    });
}

/** Sends the table (then a request while another holds the one place in flight, then one while draining). */
async function run(broker: TestBroker, source: ReturnType<typeof tokenSource>): Promise<Seen[]> {
  const send = (sent: Sent) => broker.inject({ url: `/api/gatekeeper-token${sent.path}`, headers: sent.headers });
  // Prime the cache (a miss, through fastify either way), from a client of its own.
  for (const application of [APP, WEB_APP]) {
    expect((await send({ path: `?application_package=${application}`, headers: { 'x-forwarded-for': '192.0.2.1' } })).statusCode).toBe(200);
  }
  const answers: Seen[] = [];
  for (const row of ROWS) for (const sent of row.requests) answers.push(seen(await send(sent)));
  const holding = send({ path: `?application_package=${SLOW_APP}`, headers: { 'x-forwarded-for': '192.0.2.2' } });
  await waitUntil(() => source.holding(), 'the slow request to hold the one place in flight', 5000);
  answers.push(
    seen(await send({ path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '198.51.100.8', 'x-request-id': 'full' } })),
  );
  source.release();
  expect((await holding).statusCode).toBe(200);
  broker.built.startDraining();
  answers.push(
    seen(await send({ path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '198.51.100.9', 'x-request-id': 'draining' } })),
  );
  return answers;
}

describe('the request contract: the fast path and the fastify route answer, count and log alike', () => {
  it('gives every request of the table the same status, headers, body, metrics and log line on both paths', async () => {
    const paths = [true, false].map((fastPath) => {
      const source = tokenSource();
      const broker = injectedBroker(config(), { tokenSource: source, now: () => NOW, logLevel: 'debug', fastPath });
      closers.push(() => broker.close());
      // What reaches fastify: with the fast path, no request of the table but the misses.
      const routed: string[] = [];
      broker.built.app.addHook('onResponse', (request, _reply, done) => {
        routed.push(String(request.headers['x-request-id'] ?? ''));
        done();
      });
      return { broker, source, routed };
    });
    const [fast, route] = paths as [(typeof paths)[0], (typeof paths)[0]];
    const fastAnswers = await run(fast.broker, fast.source);
    const routeAnswers = await run(route.broker, route.source);

    expect(fast.routed.filter((id) => id !== '')).toEqual([]); // every request of the table took the fast path
    expect(route.routed).toHaveLength(fastAnswers.length + 3);
    ROWS.flatMap((row) => row.requests.map(() => row.name))
      .concat('in flight full', 'draining')
      .forEach((name, index) => {
        expect(fastAnswers[index], name).toEqual(routeAnswers[index]);
      });
    expect(fastAnswers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 503, 200]);
    expect(fastAnswers[3]!.headers['access-control-allow-origin']).toBe(`https://${WEB_APP}`);
    expect(fastAnswers[9]!.body).toContain('urn:area-metrics:broker:problem:overloaded');
    expect(fastAnswers[10]!.headers.connection).toBe('close');

    expect(completedLines(fast.broker)).toEqual(completedLines(route.broker));
    expect(completedLines(fast.broker).find((line) => line.reqId === 'rate-3')).toMatchObject({
      level: 'info',
      status: 429,
      problem: 'too-many-requests',
      client: '203.0.113.7',
      application: APP,
    });
    const [fastMetrics, routeMetrics] = await Promise.all([fast.broker.built.metricsText(), route.broker.built.metricsText()]);
    expect(fastMetrics.text).toEqual(routeMetrics.text);
    expect(fastMetrics.text).toContain('area_metrics_broker_token_requests_total{outcome="hit",status="200"} 9');
    expect(fastMetrics.text).toContain('area_metrics_broker_token_requests_total{outcome="error",status="429"} 1');
    expect(fastMetrics.text).toContain('area_metrics_broker_token_requests_total{outcome="error",status="503"} 1');
  });
});

describe('the request contract with attestation enforced', () => {
  it('answers a remembered genuine token alike on both paths, and counts its attestation once', async () => {
    const key = await issuerKey('contract-key');
    const issuer = await startIssuer([key]);
    closers.push(() => issuer.close());
    const attestation = { mode: 'enforce', provider: 'firebase-app-check', projectNumber: PROJECT_NUMBER, jwksUrl: issuer.jwksUrl };
    const applications = {
      [APP]: { platform: 'android', appId: ANDROID_APP_ID },
      [WEB_APP]: { platform: 'web', appId: IOS_APP_ID },
      [SLOW_APP]: { platform: 'slow', appId: 'slow' },
    };
    const genuine = await signToken(key, appCheckClaims(ANDROID_APP_ID, NOW));
    const requests: Sent[] = [
      {
        path: `?application_package=${APP}`,
        headers: { 'x-forwarded-for': '198.51.100.31', 'x-request-id': 'att-1', 'x-firebase-appcheck': genuine },
      },
      {
        path: `?application_package=${APP}`,
        headers: { 'x-forwarded-for': '198.51.100.32', 'x-request-id': 'att-2', 'x-firebase-appcheck': ` ${genuine} ` },
      },
      {
        path: `?application_package=${WEB_APP}`,
        headers: { 'x-forwarded-for': '198.51.100.33', 'x-request-id': 'att-3', 'x-firebase-appcheck': genuine },
      },
      { path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '198.51.100.34', 'x-request-id': 'att-4' } },
    ];
    const paths = await Promise.all(
      [true, false].map(async (fastPath) => {
        const broker = injectedBroker(config({ applications, attestation, limits: { perClientPerMinute: 100 } }), {
          tokenSource: tokenSource(),
          now: () => NOW,
          logLevel: 'debug',
          fastPath,
        });
        closers.push(() => broker.close());
        const routed: string[] = [];
        broker.built.app.addHook('onResponse', (request, _reply, done) => {
          routed.push(String(request.headers['x-request-id'] ?? ''));
          done();
        });
        const send = (sent: Sent) => broker.inject({ url: `/api/gatekeeper-token${sent.path}`, headers: sent.headers });
        // The first use of the token is verified (through fastify either way); then it is remembered.
        expect(
          (await send({ path: `?application_package=${APP}`, headers: { 'x-forwarded-for': '192.0.2.9', 'x-firebase-appcheck': genuine } }))
            .statusCode,
        ).toBe(200);
        const answers: Seen[] = [];
        for (const sent of requests) answers.push(seen(await send(sent)));
        return { broker, answers, routed };
      }),
    );
    const [fast, route] = paths as [(typeof paths)[0], (typeof paths)[0]];
    expect(fast.answers).toEqual(route.answers);
    expect(fast.answers.map((answer) => answer.status)).toEqual([200, 200, 403, 401]);
    expect(fast.routed).toEqual(['', 'att-3', 'att-4']); // the remembered token's requests took the fast path
    expect(completedLines(fast.broker)).toEqual(completedLines(route.broker));
    const [fastMetrics, routeMetrics] = await Promise.all([fast.broker.built.metricsText(), route.broker.built.metricsText()]);
    expect(fastMetrics.text).toEqual(routeMetrics.text);
    expect(fastMetrics.text).toContain('area_metrics_broker_attestation_total{result="valid"} 3');
    expect(fastMetrics.text).toContain('area_metrics_broker_attestation_total{result="other-app"} 1');
    expect(fastMetrics.text).toContain('area_metrics_broker_attestation_total{result="missing"} 1');
  });
});

const redisMissing = warnIfRedisMissing('the test that a refused request is counted once (test/broker/http/request-contract.test.ts)');

describe.skipIf(redisMissing)('the per-client rate', () => {
  it("counts a refused request once, whichever path answers it (the count is Redis's, shared by the instances)", async () => {
    const redis = await startRedis();
    closers.push(() => redis.stop());
    const brokers = [true, false].map((fastPath) => {
      const broker = injectedBroker(config({ redis: { url: redis.url }, limits: { perClientPerMinute: 3 } }), {
        tokenSource: tokenSource(),
        now: () => NOW,
        fastPath,
      });
      closers.push(() => broker.close());
      return broker;
    });
    for (const broker of brokers) await untilRedisKnown(broker.logs);
    const admin = new Redis(redis.url);
    closers.push(async () => void admin.quit());
    for (const [index, broker] of brokers.entries()) {
      const client = `198.51.100.${20 + index}`;
      const statuses: number[] = [];
      for (let sent = 0; sent < 6; sent++) {
        statuses.push(
          (await broker.inject({ url: `/api/gatekeeper-token?application_package=${APP}`, headers: { 'x-forwarded-for': client } }))
            .statusCode,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      expect(await admin.get(`area-metrics:broker:rate:${client}`)).toBe('6');
    }
  });
});
