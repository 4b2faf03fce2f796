import { afterEach, describe, expect, it } from 'vitest';
import { resolveBrokerConfig, type BrokerConfig } from '../../../src/broker/config/config.js';
import { readRequestTarget } from '../../../src/broker/http/request-target.js';
import { startBroker, type RunningBroker } from '../../../src/broker/http/server.js';
import type { FetchedToken, TokenSource } from '../../../src/broker/token/token-source.js';
import { ANDROID_APP_ID, PROJECT_NUMBER, appCheckClaims, issuerKey, signToken, startIssuer } from '../attestation-issuer.js';
import { waitUntil } from '../../helpers/cli.js';
import { LogCapture, injectedBroker } from '../broker-harness.js';
import { rawRequest } from '../raw-http.js';

// The request target is read once, the way fastify's router reads it, before the fast path, the router, the limits
// and the logs see it. These spellings used to reach the router by another reading than the fast path's and the
// limits': a cold cache then threw from a callback and ended the process.
const APP = 'com.acme.shop';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0YXJnZXQifQ.c2lnbmF0dXJl';
const NOW = Date.parse('2026-03-01T12:00:00Z');
const QUERY = `application_package=${APP}`;

/**
 * Each spelling, and what the broker answers it with: the router's reading (200, 404) or a refusal (400). Node's own
 * HTTP parser refuses a fragment in an absolute form before the broker sees the request (fastify's client-error 400).
 */
const SPELLINGS: readonly { readonly target: string; readonly status: number; readonly byParser?: true }[] = [
  { target: `/api/gatekeeper-token?${QUERY}`, status: 200 },
  { target: `/api/gatekeeper%2Dtoken?${QUERY}`, status: 200 },
  { target: `/api/gatekeeper%2dtoken/?application_package=com%2Eacme%2Eshop`, status: 200 },
  { target: `http://x/api/gatekeeper-token?${QUERY}`, status: 200 },
  { target: `HTTPS://broker.example:8443/api/gatekeeper%2Dtoken?${QUERY}`, status: 200 },
  { target: `/api/gatekeeper-token#?${QUERY}`, status: 400 },
  { target: `/api/gatekeeper-token?${QUERY}#x`, status: 400 },
  { target: `http://x#/api/gatekeeper-token?${QUERY}`, status: 400, byParser: true },
  { target: `http:///api/gatekeeper-token?${QUERY}`, status: 400 },
  { target: '/api/gatekeeper-token?application_package=%E0%A4%A', status: 400 },
  { target: `/api/gatekeeper%ZZtoken?${QUERY}`, status: 400 },
  { target: `/api/gatekeeper-token%3F${QUERY}`, status: 404 },
  { target: `/api/%2525gatekeeper-token?${QUERY}`, status: 404 },
  { target: `http://x?${QUERY}`, status: 404 },
];

describe('readRequestTarget', () => {
  it('reads a target as the router does: absolute form by its path, the path decoded but for reserved characters', () => {
    expect(readRequestTarget(`/api/gatekeeper-token?${QUERY}`)).toBe(`/api/gatekeeper-token?${QUERY}`);
    expect(readRequestTarget('/api/gatekeeper%2Dtoken?a=%41')).toBe('/api/gatekeeper-token?a=%41');
    expect(readRequestTarget('http://x/api/t?q')).toBe('/api/t?q');
    expect(readRequestTarget('http://x?q=1')).toBe('/?q=1');
    expect(readRequestTarget('http://x')).toBe('/');
    expect(readRequestTarget('/a%2Fb%3Fc%23d%25e')).toBe('/a%2Fb%3Fc%23d%25e');
    expect(readRequestTarget('/%25%32%46')).toBe('/%252F');
    expect(readRequestTarget('*')).toBe('*');
  });

  it('reads its own reading the same way again', () => {
    for (const { target } of SPELLINGS) {
      const once = readRequestTarget(target);
      if (typeof once === 'string') expect(readRequestTarget(once)).toBe(once);
    }
  });

  it('refuses a fragment, a broken absolute form and percent-encoding that does not decode', () => {
    expect(readRequestTarget('/api/gatekeeper-token#?a=b')).toEqual({ refused: 'fragment' });
    expect(readRequestTarget('http://x#/a')).toEqual({ refused: 'absolute form' });
    expect(readRequestTarget('http:///a')).toEqual({ refused: 'absolute form' });
    expect(readRequestTarget('/a?application_package=%E0%A4%A')).toEqual({ refused: 'percent-encoding in the query' });
    expect(readRequestTarget('/a%E0%A4%A')).toEqual({ refused: 'percent-encoding in the path' });
  });
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

function config(perClientPerMinute = 1_000_000, jwksUrl?: string): BrokerConfig {
  const attested =
    jwksUrl === undefined
      ? {}
      : { attestation: { mode: 'enforce', provider: 'firebase-app-check', projectNumber: PROJECT_NUMBER, jwksUrl } };
  return resolveBrokerConfig(
    {
      authUrl: 'http://127.0.0.1:9',
      platforms: { android: { clientId: 'target-client', clientSecretEnv: 'TARGET_SECRET' } },
      applications: { [APP]: jwksUrl === undefined ? 'android' : { platform: 'android', appId: ANDROID_APP_ID } },
      limits: { perClientPerMinute },
      ...attested,
    },
    { env: { TARGET_SECRET: 'target-secret-value' } },
  );
}

/** Tokens valid for an hour at the frozen clock, fetched after a turn of the event loop (a real miss's shape). */
function tokenSource(): TokenSource & { fetches(): number } {
  let fetches = 0;
  return {
    fetches: () => fetches,
    fetch: async (): Promise<FetchedToken> => {
      fetches += 1;
      await new Promise((resolve) => setTimeout(resolve, 5)); // the fake's latency, not a wait for something
      return { accessToken: TOKEN, expiresAt: NOW + 3_600_000 };
    },
    close: async () => undefined,
  };
}

async function listening(
  perClientPerMinute?: number,
  jwksUrl?: string,
): Promise<{ broker: RunningBroker; port: number; logs: LogCapture; source: ReturnType<typeof tokenSource> }> {
  const logs = new LogCapture();
  const source = tokenSource();
  const broker = await startBroker(config(perClientPerMinute, jwksUrl), {
    port: 0,
    logStream: logs,
    tokenSource: source,
    now: () => NOW,
    hitSummaryIntervalMs: 3_600_000,
  });
  closers.push(() => broker.close());
  return { broker, port: Number(new URL(broker.url).port), logs, source };
}

describe('odd spellings of the request target, over a socket', () => {
  it('answers each spelling, cold and then warm, as the router reads it, and stays up', async () => {
    // A broker of its own for each spelling, all side by side (a drain takes half a second).
    await Promise.all(
      SPELLINGS.map(async ({ target, status, byParser }) => {
        const cold = await listening();
        const first = await rawRequest(cold.port, target);
        expect([target, first.status]).toEqual([target, status]);
        if (status === 200) expect(JSON.parse(first.body)).toEqual({ access_token: TOKEN, expires_in: 3600 });
        else if (byParser === undefined) expect([target, first.headers['content-type']]).toEqual([target, 'application/problem+json']);
        const warm = await rawRequest(cold.port, target);
        expect([target, warm.status]).toEqual([target, status]);
        expect((await rawRequest(cold.port, '/healthz')).status).toBe(200);
        expect(cold.logs.text()).not.toContain('unexpected error');
        expect(cold.logs.text()).not.toContain(TOKEN);
      }),
    );
  });

  it('answers each spelling as the router reads it with attestation enforced, a genuine token sent each time', async () => {
    const key = await issuerKey('target-key');
    const issuer = await startIssuer([key]);
    closers.push(() => issuer.close());
    const { port, logs } = await listening(undefined, issuer.jwksUrl);
    await waitUntil(() => logs.text().includes('attestation keys fetched'), 'the first attestation keys fetched', 5000);
    const genuine = await signToken(key, appCheckClaims(ANDROID_APP_ID, NOW));
    for (const round of ['cold', 'warm']) {
      for (const { target, status } of SPELLINGS) {
        const answer = await rawRequest(port, target, { 'X-Firebase-AppCheck': genuine });
        expect([round, target, answer.status]).toEqual([round, target, status]);
      }
    }
    expect(logs.text()).not.toContain('unexpected error');
    expect(logs.text()).not.toContain(genuine);
  });

  it('counts every spelling of the token route against the client, and refusals too', async () => {
    const { port } = await listening(4);
    const statuses: number[] = [];
    for (const target of [
      `/api/gatekeeper%2Dtoken?${QUERY}`,
      `http://x/api/gatekeeper-token?${QUERY}`,
      `/api/gatekeeper-token#?${QUERY}`,
      '/api/gatekeeper-token?application_package=%E0%A4%A',
      `/api/gatekeeper-token?${QUERY}`,
    ]) {
      statuses.push((await rawRequest(port, target)).status);
    }
    expect(statuses).toEqual([200, 200, 400, 400, 429]);
    expect((await rawRequest(port, '/healthz')).status).toBe(200);
  });

  it('logs a hundred refused targets in a line, and counts the rest', async () => {
    const { broker, port, logs } = await listening();
    for (let index = 0; index < 100; index += 1) {
      expect((await rawRequest(port, `/api/gatekeeper-token#?${QUERY}&n=${index}`)).status).toBe(400);
    }
    const refusals = logs.entries().filter((entry) => entry.msg === 'request completed' && entry.status === 400);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ problem: 'malformed-url', reason: 'fragment', client: '127.0.0.1' });
    await broker.close();
    closers.length = 0;
    expect(logs.entries().find((entry) => entry.msg === 'errors not logged one by one')).toMatchObject({
      errors: { '400 malformed-url': 99 },
    });
  });
});

describe('a bug met by every request', () => {
  it('is a 500 problem+json each time and one bounded error line per interval, not a crash', async () => {
    let broken = false;
    const broker = injectedBroker(config(), {
      tokenSource: tokenSource(),
      hitSummaryIntervalMs: 3_600_000,
      now: () => {
        if (broken) throw new TypeError('the clock broke');
        return NOW;
      },
    });
    closers.push(() => broker.close());
    expect((await broker.inject(`/api/gatekeeper-token?${QUERY}`)).statusCode).toBe(200);
    broken = true;
    for (let index = 0; index < 100; index += 1) {
      const answer = await broker.inject(`/api/gatekeeper%2Dtoken?${QUERY}`);
      expect(answer.statusCode).toBe(500);
      expect(answer.headers['content-type']).toBe('application/problem+json');
    }
    const errors = broker.logs.entries().filter((entry) => entry.msg === 'unexpected error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ error: { type: 'TypeError', message: 'the clock broke' } });
    expect(String((errors[0]?.error as { stack: string }).stack).length).toBeLessThanOrEqual(1000);
    expect(broker.logs.lines.length).toBeLessThan(10);
    broken = false;
  });
});
