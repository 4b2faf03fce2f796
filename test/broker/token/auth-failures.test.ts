import { describe, expect, it } from 'vitest';
import { startFakeAuthServer, type FakeAuthServer } from '../../helpers/fake-auth-server.js';
import { ANDROID_APP, brokerFetch, injectTestBroker, tokenUrl, type TestBroker, useCleanups } from '../broker-harness.js';

// Failure modes and token shapes the sandbox does not produce, against a small node:http auth server.
const stops = useCleanups();

async function setup(options: { authTimeoutSeconds?: number } = {}): Promise<{ auth: FakeAuthServer; broker: TestBroker }> {
  const auth = await startFakeAuthServer();
  stops.push(() => auth.close());
  const broker = await injectTestBroker({ authUrl: auth.url, clientId: auth.clientId, clientSecret: auth.clientSecret, ...options });
  stops.push(() => broker.close());
  return { auth, broker };
}

async function get(broker: TestBroker): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await brokerFetch(tokenUrl(broker, ANDROID_APP));
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('auth server answers the broker maps', () => {
  it.each([
    [404, 502, 'auth-server-rejected'],
    [403, 502, 'auth-server-rejected'],
    [400, 502, 'auth-server-rejected'],
    [429, 503, 'auth-server-unavailable'],
    [500, 503, 'auth-server-unavailable'],
    [502, 503, 'auth-server-unavailable'],
    [504, 503, 'auth-server-unavailable'],
  ])('auth server HTTP %i → broker %i', async (authStatus, brokerStatus, kind) => {
    const { auth, broker } = await setup();
    auth.behave({ status: authStatus, body: '{"error":"nope"}' });
    const result = await get(broker);
    expect(result.status).toBe(brokerStatus);
    expect(result.body.type).toBe(`urn:area-metrics:broker:problem:${kind}`);
    expect(result.headers.has('retry-after')).toBe(brokerStatus === 503);
    expect(auth.tokenRequests()).toBe(1); // no retries inside the broker: the app retries after Retry-After
  });

  it('answers 502 for a 200 that is not a token', async () => {
    const { auth, broker } = await setup();
    auth.behave({ status: 200, body: '<html>login</html>' });
    expect((await get(broker)).body.type).toBe('urn:area-metrics:broker:problem:auth-server-invalid-response');
    auth.behave({ status: 200, body: '{"token":"x"}' });
    expect((await get(broker)).status).toBe(502);
  });

  it('answers 503 when the auth server is slower than authTimeoutSeconds', async () => {
    const { auth, broker } = await setup({ authTimeoutSeconds: 0.2 });
    auth.behave({ delayMs: 1000 });
    const result = await get(broker);
    expect(result.status).toBe(503);
    expect(result.headers.get('retry-after')).toBe('1'); // the back-off that follows a first failure
  });
});

describe('token shapes', () => {
  it('returns a token with neither expires_in nor exp without expires_in, and caches it for a while', async () => {
    const { auth, broker } = await setup();
    auth.behave({ expiresIn: false, exp: false });
    const first = await get(broker);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(['access_token']);
    const second = await get(broker);
    expect(second.body).toEqual(first.body);
    expect(auth.tokenRequests()).toBe(1);
  });

  it('caches an opaque token by its expires_in, and a JWT without expires_in by its exp', async () => {
    const { auth, broker } = await setup();
    auth.behave({ jwt: false, ttlSeconds: 600 });
    const opaque = await get(broker);
    expect(opaque.body.expires_in).toBeGreaterThan(595);
    expect((await get(broker)).body.access_token).toBe(opaque.body.access_token);
    expect(auth.tokenRequests()).toBe(1);

    const { auth: other, broker: second } = await setup();
    other.behave({ expiresIn: false, ttlSeconds: 900 });
    const byExp = await get(second);
    expect(byExp.body.expires_in).toBeGreaterThan(890);
    expect(byExp.body.expires_in).toBeLessThanOrEqual(900);
    expect((await get(second)).body.access_token).toBe(byExp.body.access_token);
    expect(other.tokenRequests()).toBe(1);
  });
});
