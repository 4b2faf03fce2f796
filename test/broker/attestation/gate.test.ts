import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolveBrokerConfig, type BrokerConfig } from '../../../src/broker/config/config.js';
import { waitUntil } from '../../helpers/cli.js';
import { startFakeAuthServer, type FakeAuthServer } from '../../helpers/fake-auth-server.js';
import { startRedis, warnIfRedisMissing } from '../../helpers/redis.js';
import {
  ANDROID_APP_ID,
  IOS_APP_ID,
  PROJECT_NUMBER,
  appCheckClaims,
  askWithAttestation,
  hmacWithPublicKey,
  issuerKey,
  signToken,
  startIssuer,
  unsignedToken,
  withKid,
  type IssuerKey,
  type TestIssuer,
  APP_CHECK_HEADER,
} from '../attestation-issuer.js';
import { TestClock, injectedBroker, untilRedisKnown, type TestBroker, useCleanups } from '../broker-harness.js';

// App Check attestation against a local JWKS issuer on loopback, its keys made with jose here, and a fake auth server.
const APP = 'com.acme.shop';
const IOS_APP = 'com.acme.ShopApp';
const WEB_APP = 'shop.acme.example';
const WEB_APP_ID = `1:${PROJECT_NUMBER}:web:9c8d7e6f`;
const SECRET = 'attestation-test-secret-4d1c';

/** Key pairs made once for the file (RSA key generation is slow), published under each test's kids. */
const pairs: { rsa: IssuerKey[]; ec: IssuerKey[] } = { rsa: [], ec: [] };
beforeAll(async () => {
  [pairs.rsa, pairs.ec] = await Promise.all([
    Promise.all([0, 1, 2].map((index) => issuerKey(`rsa-pair-${index}`))),
    Promise.all([0, 1].map((index) => issuerKey(`ec-pair-${index}`, 'ES256'))),
  ]);
});
const rsaKey = (kid: string, pair = 0): IssuerKey => withKid(pairs.rsa[pair]!, kid);
const ecKey = (kid: string, pair = 0): IssuerKey => withKid(pairs.ec[pair]!, kid);

const stops = useCleanups();

/** Every token minted and every text the brokers wrote or answered: no token may appear in any of it. */
const minted = new Set<string>();
const written: (() => string)[] = [];

async function auth(): Promise<FakeAuthServer> {
  const started = await startFakeAuthServer({ clientId: 'attestation-client', clientSecret: SECRET });
  stops.push(() => started.close());
  return started;
}

async function issuer(keys: readonly IssuerKey[], maxAgeSeconds?: number): Promise<TestIssuer> {
  const started = await startIssuer(keys, maxAgeSeconds);
  stops.push(() => started.close());
  return started;
}

function configOf(authUrl: string, attestation: Record<string, unknown>, extra: Record<string, unknown> = {}): BrokerConfig {
  const platform = { clientId: 'attestation-client', clientSecretEnv: 'SECRET' };
  return resolveBrokerConfig(
    {
      authUrl,
      platforms: { android: platform, ios: platform, web: platform },
      applications: {
        [APP]: { platform: 'android', appId: ANDROID_APP_ID },
        [IOS_APP]: { platform: 'ios', appId: IOS_APP_ID },
        [WEB_APP]: { platform: 'web', appId: WEB_APP_ID },
      },
      limits: { perClientPerMinute: 1_000_000 },
      attestation: { provider: 'firebase-app-check', projectNumber: PROJECT_NUMBER, ...attestation },
      ...extra,
    },
    { env: { SECRET } },
  );
}

function broker(config: BrokerConfig, clock: TestClock, redisUrl?: string): TestBroker {
  const started = injectedBroker(config, { now: clock.now, ...(redisUrl !== undefined ? { redisUrl } : {}) });
  stops.push(() => started.close());
  written.push(() => started.logs.text());
  return started;
}

async function mint(key: IssuerKey, claims: Parameters<typeof signToken>[1], kid?: string): Promise<string> {
  const token = await signToken(key, claims, kid);
  minted.add(token);
  return token;
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

async function ask(target: TestBroker, token?: string, application = APP): Promise<Answer> {
  const response = await askWithAttestation(target, token, application);
  const text = await response.text();
  written.push(() => text);
  return { status: response.status, headers: response.headers, body: JSON.parse(text) as Record<string, unknown> };
}

function expectRefused(answer: Answer, status: number, kind: string): void {
  expect(answer.status, kind).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ type: `urn:area-metrics:broker:problem:${kind}`, status });
}

/** The value of `area_metrics_broker_attestation_total{result}`. */
async function attested(target: TestBroker, result: string): Promise<number> {
  const { text } = await target.built.metricsText();
  written.push(() => text);
  const line = text.split('\n').find((candidate) => candidate.startsWith(`area_metrics_broker_attestation_total{result="${result}"} `));
  return Number(line?.split(' ')[1]);
}

async function readyz(target: TestBroker): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await target.fetch('/readyz');
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('attestation enforced (firebase-app-check)', () => {
  it("serves a genuine token's own application and refuses every other kind, none of them reaching the auth server", async () => {
    const clock = new TestClock();
    const [rsa, ec, stranger] = [rsaKey('rsa-1'), ecKey('ec-1'), rsaKey('rsa-1', 1)];
    const keys = await issuer([rsa, ec]);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl }), clock);
    const now = clock.now();
    const claims = appCheckClaims(ANDROID_APP_ID, now);
    const refusals: [string, string | undefined, number, string][] = [
      ['missing', undefined, 401, 'attestation-missing'],
      ['empty', '  ', 401, 'attestation-missing'],
      ['forged: another key under a published kid', await mint(stranger, claims), 401, 'attestation-invalid'],
      ['expired', await mint(rsa, { ...claims, iat: claims.iat! - 7200, exp: claims.iat! - 120 }), 401, 'attestation-invalid'],
      ['issued in the future', await mint(rsa, { ...claims, iat: claims.iat! + 300 }), 401, 'attestation-invalid'],
      ['another project', await mint(rsa, appCheckClaims(ANDROID_APP_ID, now, '987654321')), 401, 'attestation-invalid'],
      ['alg none', unsignedToken(rsa.kid, claims), 401, 'attestation-invalid'],
      ['HS256 signed with the public key', await hmacWithPublicKey(rsa, claims), 401, 'attestation-invalid'],
      ['an RSA key used as ES256', await mint(ec, claims, rsa.kid), 401, 'attestation-invalid'],
      ['garbage', 'not a token at all', 401, 'attestation-invalid'],
      ['three dots of garbage', 'e30.e30.e30', 401, 'attestation-invalid'],
      ['oversized', `${'x'.repeat(9000)}.${'y'.repeat(10)}.z`, 401, 'attestation-invalid'],
      ["another application's genuine token", await mint(rsa, appCheckClaims(IOS_APP_ID, now)), 403, 'attestation-other-app'],
    ];
    for (const [name, token, status, kind] of refusals) {
      if (token !== undefined) minted.add(token);
      const answer = await ask(target, token);
      expectRefused(answer, status, kind);
      expect(answer.body.detail, name).toEqual(expect.any(String));
    }
    expect(tokens.tokenRequests()).toBe(0);

    expect((await ask(target, await mint(rsa, claims))).status).toBe(200);
    expect((await ask(target, await mint(ec, { ...claims, jti: 'ec-token' }))).status).toBe(200);
    expect((await ask(target, await mint(rsa, appCheckClaims(IOS_APP_ID, now)), IOS_APP)).status).toBe(200);
    expect(tokens.tokenRequests()).toBe(2); // one per application: the second android answer came from the cache

    expect(await attested(target, 'valid')).toBe(3);
    expect(await attested(target, 'missing')).toBe(2);
    expect(await attested(target, 'invalid')).toBe(10);
    expect(await attested(target, 'other-app')).toBe(1);
    expect(await attested(target, 'replayed')).toBe(0);
    expect(await attested(target, 'no-keys')).toBe(0);
    const lines = target.logs.entries().filter((entry) => entry.msg === 'request completed' && entry.status === 401);
    expect(lines.some((line) => line.attestation === 'invalid' && /^attestation: signature/.test(String(line.reason)))).toBe(true);
  });

  it('verifies a genuine token once and remembers it until its exp: the fast path answers it after the first time', async () => {
    const clock = new TestClock();
    const key = rsaKey('rsa-1');
    const keys = await issuer([key]);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl }), clock);
    const routed: number[] = [];
    target.built.app.addHook('onResponse', (_request, reply, done) => {
      routed.push(reply.statusCode);
      done();
    });
    const token = await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now()));
    for (let round = 0; round < 4; round++) expect((await ask(target, token)).status).toBe(200);
    expect(routed).toEqual([200]); // verified once, through fastify; then remembered, answered before it
    expect(await attested(target, 'valid')).toBe(4);
    // The remembered verdict is for this application only.
    expectRefused(await ask(target, token, IOS_APP), 403, 'attestation-other-app');
    clock.advance(3600_000 + 61_000); // past exp and its skew: verified again, and refused
    expectRefused(await ask(target, token), 401, 'attestation-invalid');
  });

  it('looks at the issuer again for an unknown kid (a key rotated in), at most every 30 s', async () => {
    const clock = new TestClock();
    const [first, second, third] = [rsaKey('key-1'), ecKey('key-2'), rsaKey('key-3', 1)];
    const keys = await issuer([first]);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl }), clock);
    expect((await ask(target, await mint(first, appCheckClaims(ANDROID_APP_ID, clock.now())))).status).toBe(200);
    expect(keys.fetches()).toBe(1);
    keys.publish([first, second]);
    clock.advance(30_000);
    expect((await ask(target, await mint(second, appCheckClaims(ANDROID_APP_ID, clock.now())))).status).toBe(200);
    expect(keys.fetches()).toBe(2);
    keys.publish([first, second, third]);
    // Within 30 s of the last look: the unknown kid is refused without asking the issuer.
    expectRefused(await ask(target, await mint(third, appCheckClaims(ANDROID_APP_ID, clock.now()))), 401, 'attestation-invalid');
    expect(keys.fetches()).toBe(2);
    clock.advance(30_000);
    expect((await ask(target, await mint(third, appCheckClaims(ANDROID_APP_ID, clock.now())))).status).toBe(200);
    expect(keys.fetches()).toBe(3);
  });

  it('keeps the keys it holds working while the issuer is down, past their max-age; /readyz shows them stale', async () => {
    const clock = new TestClock();
    const key = rsaKey('rsa-1');
    const keys = await issuer([key], 60);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl }), clock);
    expect((await ask(target, await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now())))).status).toBe(200);
    expect((await readyz(target)).body.attestation).toMatchObject({ mode: 'enforce', keys: { state: 'fresh', keys: 1 } });
    keys.setDown(true);
    clock.advance(10 * 60_000); // ten times the keys' max-age
    expect((await ask(target, await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now())))).status).toBe(200);
    await waitUntil(() => /could not be fetched again/.test(target.logs.text()), 'the failed key refresh in the logs', 5000);
    const ready = await readyz(target);
    expect(ready.status).toBe(200);
    expect(ready.body.attestation).toMatchObject({ keys: { state: 'stale', keys: 1, lastError: expect.any(String) } });
    expect(target.logs.text()).toMatch(/attestation keys could not be fetched again; the keys held keep working/);
  });

  it('fails closed on a fresh instance that holds no keys: 503 with Retry-After, /readyz 503, until the issuer answers', async () => {
    const clock = new TestClock();
    const key = rsaKey('rsa-1');
    const keys = await issuer([key]);
    keys.setDown(true);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl }), clock);
    const token = await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now()));
    const refused = await ask(target, token);
    expectRefused(refused, 503, 'attestation-unavailable');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(30);
    expect(await readyz(target)).toMatchObject({
      status: 503,
      body: { status: 'no-attestation-keys', attestation: { keys: { state: 'none', keys: 0 } } },
    });
    expect(await attested(target, 'no-keys')).toBe(1);
    expect(tokens.tokenRequests()).toBe(0);
    expect(target.logs.text()).toMatch(/attestation keys could not be fetched; none held/);
    keys.setDown(false);
    clock.advance(30_000);
    expect((await ask(target, token)).status).toBe(200);
    expect((await readyz(target)).status).toBe(200);
  });

  it("lets a web application's preflight send the attestation header", async () => {
    const clock = new TestClock();
    const keys = await issuer([rsaKey('rsa-1')]);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl }), clock);
    const preflight = await target.fetch(`/api/gatekeeper-token?application_package=${WEB_APP}`, {
      method: 'OPTIONS',
      headers: {
        origin: `https://${WEB_APP}`,
        'access-control-request-method': 'GET',
        'access-control-request-headers': APP_CHECK_HEADER.toLowerCase(),
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe(`X-Request-Id, ${APP_CHECK_HEADER}`);
    // A refusal is readable by the page too.
    const refused = await target.fetch(`/api/gatekeeper-token?application_package=${WEB_APP}`, {
      headers: { origin: `https://${WEB_APP}` },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(`https://${WEB_APP}`);
  });
});

describe('attestation in report mode', () => {
  it('answers as usual, and counts and logs each outcome', async () => {
    const clock = new TestClock();
    const [key, stranger] = [rsaKey('rsa-1'), rsaKey('rsa-1', 2)];
    const keys = await issuer([key]);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'report', jwksUrl: keys.jwksUrl }), clock);
    const now = clock.now();
    expect((await ask(target)).status).toBe(200);
    expect((await ask(target, await mint(stranger, appCheckClaims(ANDROID_APP_ID, now)))).status).toBe(200);
    expect((await ask(target, await mint(key, appCheckClaims(IOS_APP_ID, now)))).status).toBe(200);
    expect((await ask(target, await mint(key, appCheckClaims(ANDROID_APP_ID, now)))).status).toBe(200);
    expect(await attested(target, 'missing')).toBe(1);
    expect(await attested(target, 'invalid')).toBe(1);
    expect(await attested(target, 'other-app')).toBe(1);
    expect(await attested(target, 'valid')).toBe(1);
    const outcomes = target.logs
      .entries()
      .filter((entry) => entry.msg === 'request completed' && entry.level === 'info')
      .map((entry) => entry.attestation);
    expect(outcomes).toEqual(expect.arrayContaining(['missing', 'invalid', 'other-app']));
    expect((await readyz(target)).body.attestation).toMatchObject({ mode: 'report', provider: 'firebase-app-check' });
  });
});

describe('single-use tokens', () => {
  it("accepts a token's jti once (in memory without Redis)", async () => {
    const clock = new TestClock();
    const key = rsaKey('rsa-1');
    const keys = await issuer([key]);
    const tokens = await auth();
    const target = broker(configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl, singleUse: true }), clock);
    const token = await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now()));
    expect((await ask(target, token)).status).toBe(200);
    expectRefused(await ask(target, token), 403, 'attestation-replayed');
    const withoutJti = appCheckClaims(ANDROID_APP_ID, clock.now());
    delete withoutJti.jti;
    expectRefused(await ask(target, await mint(key, withoutJti)), 401, 'attestation-invalid');
    expect((await ask(target, await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now())))).status).toBe(200);
    expect(await attested(target, 'replayed')).toBe(1);
  });

  const redisMissing = warnIfRedisMissing('the single-use attestation test across instances (test/broker/attestation/gate.test.ts)');
  it.skipIf(redisMissing)('refuses a token at a second instance sharing Redis once the first has accepted it', async () => {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    const clock = new TestClock();
    const key = rsaKey('rsa-1');
    const keys = await issuer([key]);
    const tokens = await auth();
    const config = configOf(tokens.url, { mode: 'enforce', jwksUrl: keys.jwksUrl, singleUse: true });
    const [first, second] = [broker(config, clock, redis.url), broker(config, clock, redis.url)];
    await Promise.all([untilRedisKnown(first.logs), untilRedisKnown(second.logs)]);
    const token = await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now()));
    expect((await ask(first, token)).status).toBe(200);
    expectRefused(await ask(second, token), 403, 'attestation-replayed');
    expectRefused(await ask(first, token), 403, 'attestation-replayed');
    const fresh = await mint(key, appCheckClaims(ANDROID_APP_ID, clock.now()));
    expect((await ask(second, fresh)).status).toBe(200);
  });
});

describe('attestation by any JWT issuer (provider jwt)', () => {
  it('checks the configured issuer, audience, header and application claim', async () => {
    const clock = new TestClock();
    const key = ecKey('device-key', 1);
    const keys = await issuer([key]);
    const tokens = await auth();
    const attestation = {
      mode: 'enforce',
      provider: 'jwt',
      issuer: 'https://attest.example',
      audience: 'token-broker',
      jwksUrl: keys.jwksUrl,
      header: 'X-App-Attestation',
      appClaim: 'app_id',
    };
    const target = broker(
      resolveBrokerConfig(
        {
          authUrl: tokens.url,
          platforms: { android: { clientId: 'attestation-client', clientSecretEnv: 'SECRET' } },
          applications: { [APP]: { platform: 'android', appId: 'shop-android' } },
          attestation,
        },
        { env: { SECRET } },
      ),
      clock,
    );
    const iat = Math.floor(clock.now() / 1000);
    const claims = { iss: 'https://attest.example', aud: 'token-broker', app_id: 'shop-android', iat, exp: iat + 600 };
    const send = async (token: string) =>
      target.fetch(`/api/gatekeeper-token?application_package=${APP}`, { headers: { 'x-app-attestation': `Bearer ${token}` } });
    expect((await send(await mint(key, claims))).status).toBe(200);
    expect((await send(await mint(key, { ...claims, aud: 'another-service' }))).status).toBe(401);
    expect((await send(await mint(key, { ...claims, app_id: 'shop-ios' }))).status).toBe(403);
    expect((await askWithAttestation(target, await mint(key, claims))).status).toBe(401);
  });
});

afterEach(() => {
  // The attestation token never appears in a log line, an answer or the metrics.
  const text = written.map((read) => read()).join('\n');
  for (const token of minted) {
    expect(text).not.toContain(token);
    const signature = token.split('.')[2];
    if (signature !== undefined && signature.length > 8) expect(text).not.toContain(signature);
  }
  written.length = 0;
  minted.clear();
});
