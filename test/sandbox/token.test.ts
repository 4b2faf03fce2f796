import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { useSandbox } from '../helpers/vendor.js';
import { basic, dayParams, getJson, metricUrl, YESTERDAY } from './helpers.js';

const sandbox = useSandbox({ clientId: 'tok-client', clientSecret: 'tok-secret-123', tokenTtlSeconds: 900 });

const FORM = 'application/x-www-form-urlencoded';

function tokenRequest(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sandbox.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basic('tok-client', 'tok-secret-123'), ...headers },
    body,
  });
}

function decodePart(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('sandbox token endpoint', () => {
  it('issues an HS256 JWT for client credentials, verifiable with the signing key', async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await tokenRequest('grant_type=client_credentials&scope=metrics%3Aread');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { access_token: string; expires_in: number; token_type: string; scope: string };
    expect(body.expires_in).toBe(900);
    expect(body.token_type).toBe('Bearer');
    expect(body.scope).toBe('metrics:read');
    const [header, claims, signature] = body.access_token.split('.');
    expect(decodePart(header!)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const expected = createHmac('sha256', sandbox.tokenSigningKey).update(`${header}.${claims}`).digest('base64url');
    expect(signature).toBe(expected);
    const decoded = decodePart(claims!);
    expect(decoded).toMatchObject({ iss: sandbox.url, sub: 'tok-client', aud: 'area-metrics', scope: 'metrics:read' });
    expect(decoded.iat).toBeGreaterThanOrEqual(before);
    expect(decoded.exp).toBe((decoded.iat as number) + 900);
    expect(typeof decoded.jti).toBe('string');
  });

  it('issues a new token on every call and counts the calls', async () => {
    const countBefore = sandbox.tokenRequests();
    const first = (await (await tokenRequest('grant_type=client_credentials')).json()) as { access_token: string; scope?: string };
    const second = (await (await tokenRequest('grant_type=client_credentials')).json()) as { access_token: string };
    expect(first.access_token).not.toBe(second.access_token);
    expect(first.scope).toBeUndefined();
    expect(decodePart(first.access_token.split('.')[1]!)).not.toHaveProperty('scope');
    expect(sandbox.tokenRequests()).toBe(countBefore + 2);
  });

  it('accepts client_id/client_secret form fields instead of Basic', async () => {
    const response = await fetch(`${sandbox.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: 'grant_type=client_credentials&client_id=tok-client&client_secret=tok-secret-123',
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });

  it('accepts a secret with + and % in Basic auth whether sent raw or form-encoded first, as OAuth 2.0 clients may do', async () => {
    const special = await startSandbox({ clientId: 'id+1', clientSecret: 'a+b%41c d', stores: 1, days: 1 });
    try {
      const status = async (id: string, secret: string): Promise<number> => {
        const response = await fetch(`${special.url}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': FORM, authorization: basic(id, secret) },
          body: 'grant_type=client_credentials',
        });
        await response.arrayBuffer();
        return response.status;
      };
      expect(await status('id+1', 'a+b%41c d')).toBe(200);
      expect(await status(encodeURIComponent('id+1'), encodeURIComponent('a+b%41c d'))).toBe(200);
      expect(await status('id+1', 'a b%41c d')).toBe(401);
    } finally {
      await special.close();
    }
  });

  it('answers 401 invalid_client for missing or wrong credentials, without echoing them', async () => {
    const wrong = await tokenRequest('grant_type=client_credentials', { authorization: basic('tok-client', 'bad-secret-xyz') });
    expect(wrong.status).toBe(401);
    const text = await wrong.text();
    expect(JSON.parse(text)).toMatchObject({ error: 'invalid_client' });
    expect(text).not.toContain('bad-secret-xyz');
    const missing = await fetch(`${sandbox.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: 'grant_type=client_credentials',
    });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(await missing.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('answers 400 for a wrong grant, a missing grant or a non-form body', async () => {
    const wrongGrant = await tokenRequest('grant_type=password');
    expect(wrongGrant.status).toBe(400);
    expect(await wrongGrant.json()).toMatchObject({ error: 'unsupported_grant_type' });
    const noGrant = await tokenRequest('');
    expect(noGrant.status).toBe(400);
    expect(await noGrant.json()).toMatchObject({ error: 'invalid_request' });
    const json = await tokenRequest('{"grant_type":"client_credentials"}', { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
    expect((await fetch(`${sandbox.url}/oauth2/token`)).status).toBe(405);
  });

  it('is not affected by metric faults, only by its own switches', async () => {
    sandbox.setFaults({ failNth: { n: 1, status: 503, times: 10 } });
    expect((await tokenRequest('grant_type=client_credentials')).status).toBe(200);
    sandbox.setFaults({ tokenFailNth: { n: 2, status: 503 } });
    const statuses: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      const response = await tokenRequest('grant_type=client_credentials');
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual([200, 503, 200]);
    // tokenFailNth does not touch the metrics API.
    sandbox.setFaults({ tokenFailNth: { n: 1, status: 500 } });
    expect((await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams(YESTERDAY)))).status).toBe(200);
  });

  it('delays token requests with tokenLatencyMs', async () => {
    sandbox.setFaults({ tokenLatencyMs: 250 });
    const started = performance.now();
    const response = await tokenRequest('grant_type=client_credentials');
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
  });

  it('never records secrets or tokens in the request log', async () => {
    const response = await tokenRequest('grant_type=client_credentials');
    const { access_token: token } = (await response.json()) as { access_token: string };
    const log = JSON.stringify(sandbox.requests);
    expect(log).not.toContain('tok-secret-123');
    expect(log).not.toContain(token);
    expect(sandbox.requests.at(-1)).toMatchObject({ method: 'POST', path: '/oauth2/token', status: 200, authorized: true });
    const listed = (await (await fetch(`${sandbox.url}/_sandbox/requests?path_prefix=/oauth2`)).json()) as {
      requests: { method: string; path: string }[];
    };
    expect(listed.requests.filter((entry) => entry.method === 'POST').length).toBe(sandbox.tokenRequests());
    expect(listed.requests.every((entry) => entry.path === '/oauth2/token')).toBe(true);
    expect(JSON.stringify(listed)).not.toContain(token);
  });
});
