import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  requestClientCredentialsToken,
  tokenEndpointUrl,
  tokenLifetime,
  TokenRequestRejectedError,
  tokenResponseSchema,
} from '../../src/auth/client-credentials.js';
import { AuthError, ContractError, UnavailableError, UsageError } from '../../src/errors.js';
import { HttpClient } from '../../src/fetch/http-client.js';
import { makeJwt } from './make-jwt.js';
import { virtualClock } from '../helpers/clock.js';
import { useNock } from '../helpers/nock.js';

const AUTH = 'https://auth.example.test';
const credentials = { clientId: 'my-client', clientSecret: 's3cr3t-VALUE' };
const noRetries = { retries: 0, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 };

function client(retries = 0): HttpClient {
  return new HttpClient({ timeoutMs: 2_000, retry: { ...noRetries, retries }, clock: virtualClock() });
}

useNock();
afterEach(() => {
  nock.cleanAll();
});

describe('tokenEndpointUrl', () => {
  it.each([
    ['https://auth.example.test', 'https://auth.example.test/oauth2/token'],
    ['https://auth.example.test/', 'https://auth.example.test/oauth2/token'],
    ['https://auth.example.test/tenant/a', 'https://auth.example.test/tenant/a/oauth2/token'],
    ['https://auth.example.test/tenant/a/', 'https://auth.example.test/tenant/a/oauth2/token'],
    ['https://auth.example.test/oauth2/token', 'https://auth.example.test/oauth2/token'],
    ['https://auth.example.test/oauth2/token/', 'https://auth.example.test/oauth2/token'],
    ['http://127.0.0.1:8080/x/oauth2/token', 'http://127.0.0.1:8080/x/oauth2/token'],
  ])('%s → %s', (input, expected) => {
    expect(tokenEndpointUrl(input).toString()).toBe(expected);
  });

  it('refuses non-http URLs and URLs with credentials, without echoing them', () => {
    expect(() => tokenEndpointUrl('not a url')).toThrow(UsageError);
    expect(() => tokenEndpointUrl('ftp://auth.example.test')).toThrow(UsageError);
    try {
      tokenEndpointUrl('https://user:hunter22@auth.example.test');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).not.toContain('hunter22');
    }
  });
});

describe('tokenResponseSchema', () => {
  it('accepts expires_in as an integer or a numeric string, and keeps extra fields', () => {
    expect(tokenResponseSchema.parse({ access_token: 't', expires_in: 3600, extra: 1 })).toEqual({
      access_token: 't',
      expires_in: 3600,
      extra: 1,
    });
    expect(tokenResponseSchema.parse({ access_token: 't', expires_in: '60' }).expires_in).toBe(60);
    expect(tokenResponseSchema.parse({ access_token: 't' }).expires_in).toBeUndefined();
  });

  it.each([
    [{ access_token: '' }],
    [{ expires_in: 5 }],
    [{ access_token: 't', expires_in: -1 }],
    [{ access_token: 't', expires_in: 1.5 }],
    [{ access_token: 't', expires_in: '1h' }],
  ])('rejects %j', (body) => {
    expect(tokenResponseSchema.safeParse(body).success).toBe(false);
  });
});

describe('requestClientCredentialsToken', () => {
  it('sends exactly the client-credentials request', async () => {
    let seenBody: unknown;
    const scope = nock(AUTH, {
      reqheaders: {
        authorization: `Basic ${Buffer.from('my-client:s3cr3t-VALUE').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
    })
      .post('/oauth2/token', (body) => {
        seenBody = body;
        return true;
      })
      .reply(200, { access_token: 'tok', expires_in: 3600, token_type: 'Bearer' });
    const token = await requestClientCredentialsToken(client(), { authUrl: `${AUTH}/`, credentials });
    expect(token).toEqual({ access_token: 'tok', expires_in: 3600, token_type: 'Bearer' });
    expect(seenBody).toEqual({ grant_type: 'client_credentials' });
    expect(scope.isDone()).toBe(true);
  });

  it('sends the exact body bytes, with scope form-encoded', async () => {
    let raw = '';
    nock(AUTH)
      .post('/oauth2/token', (body) => {
        raw = typeof body === 'string' ? body : new URLSearchParams(body as Record<string, string>).toString();
        return true;
      })
      .reply(200, { access_token: 'tok' });
    await requestClientCredentialsToken(client(), { authUrl: AUTH, credentials, scope: 'metrics:read sdk' });
    expect(raw).toBe('grant_type=client_credentials&scope=metrics%3Aread+sdk');
  });

  it.each([400, 401, 403])('turns %i into an AuthError carrying error and error_description', async (status) => {
    nock(AUTH).post('/oauth2/token').reply(status, { error: 'invalid_client', error_description: 'Bad credentials' });
    const failure = await requestClientCredentialsToken(client(3), { authUrl: AUTH, credentials }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AuthError);
    expect(failure).toBeInstanceOf(TokenRequestRejectedError);
    const error = failure as TokenRequestRejectedError;
    expect(error.message).toContain('auth server rejected the client: invalid_client (Bad credentials)');
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.status).toBe(status);
    expect(error.oauthError).toBe('invalid_client');
    expect(error.message).not.toContain('s3cr3t-VALUE');
  });

  it('rejects with a plain message when the 401 body is not an OAuth error, and redacts an echoed secret', async () => {
    nock(AUTH).post('/oauth2/token').reply(401, 'nope');
    await expect(requestClientCredentialsToken(client(), { authUrl: AUTH, credentials })).rejects.toThrow(
      /HTTP 401 without an OAuth error body/,
    );
    nock(AUTH).post('/oauth2/token').reply(400, { error: 'invalid_client', error_description: 'secret s3cr3t-VALUE is wrong' });
    const error = (await requestClientCredentialsToken(client(), { authUrl: AUTH, credentials }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('secret *** is wrong');
    expect(error.message).not.toContain('s3cr3t-VALUE');
  });

  it('turns a 5xx into UnavailableError after the caller-chosen retries', async () => {
    const scope = nock(AUTH).post('/oauth2/token').times(2).reply(503, { error: 'temporarily_unavailable' });
    const error = (await requestClientCredentialsToken(client(1), { authUrl: AUTH, credentials }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toContain('POST https://auth.example.test/oauth2/token');
    expect(error.message).toContain('HTTP 503');
    expect(scope.isDone()).toBe(true);
  });

  it('turns a 404 into UnavailableError', async () => {
    nock(AUTH).post('/oauth2/token').reply(404, 'not here');
    await expect(requestClientCredentialsToken(client(), { authUrl: AUTH, credentials })).rejects.toBeInstanceOf(UnavailableError);
  });

  it('turns a network failure into UnavailableError naming the URL without credentials', async () => {
    nock(AUTH).post('/oauth2/token').replyWithError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    const error = (await requestClientCredentialsToken(client(), { authUrl: AUTH, credentials }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toContain('https://auth.example.test/oauth2/token');
    expect(error.message).not.toContain('s3cr3t-VALUE');
    expect(error.message).not.toContain(Buffer.from('my-client:s3cr3t-VALUE').toString('base64'));
  });

  it.each([
    ['a body that is not JSON', '<html>oops</html>'],
    ['JSON without access_token', { token_type: 'Bearer', expires_in: 60 }],
    ['an empty access_token', { access_token: '' }],
  ])('turns a 200 with %s into ContractError', async (_name, body) => {
    nock(AUTH).post('/oauth2/token').reply(200, body);
    await expect(requestClientCredentialsToken(client(), { authUrl: AUTH, credentials })).rejects.toBeInstanceOf(ContractError);
  });

  it('does not put a token from a malformed 200 in the error message', async () => {
    nock(AUTH).post('/oauth2/token').reply(200, { access_token: 'leaky-token-value', expires_in: 'soon' });
    const error = (await requestClientCredentialsToken(client(), { authUrl: AUTH, credentials }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(ContractError);
    expect(error.message).toContain('expires_in');
    expect(error.message).not.toContain('leaky-token-value');
  });
});

describe('tokenLifetime', () => {
  const sentAt = new Date('2026-01-01T00:00:00Z');
  const exp = (iso: string): number => Date.parse(iso) / 1000;

  it('uses expires_in from when the request was sent', () => {
    expect(tokenLifetime({ access_token: 'opaque', expires_in: 3600 }, sentAt)).toEqual({
      expiresAt: new Date('2026-01-01T01:00:00Z'),
      source: 'expires_in',
    });
  });

  it('uses the JWT exp when it is earlier, and expires_in when that is earlier', () => {
    const token = makeJwt({ exp: exp('2026-01-01T00:30:00Z') });
    expect(tokenLifetime({ access_token: token, expires_in: 3600 }, sentAt)).toEqual({
      expiresAt: new Date('2026-01-01T00:30:00Z'),
      source: 'exp',
    });
    expect(tokenLifetime({ access_token: token, expires_in: 60 }, sentAt)).toEqual({
      expiresAt: new Date('2026-01-01T00:01:00Z'),
      source: 'expires_in',
    });
  });

  it('uses exp alone, and reports none when neither is known', () => {
    const token = makeJwt({ exp: exp('2026-01-01T00:30:00Z') });
    expect(tokenLifetime({ access_token: token }, sentAt)).toEqual({
      expiresAt: new Date('2026-01-01T00:30:00Z'),
      source: 'exp',
    });
    expect(tokenLifetime({ access_token: makeJwt({ sub: 'x' }) }, sentAt)).toEqual({ source: 'none' });
    expect(tokenLifetime({ access_token: 'opaque' }, sentAt)).toEqual({ source: 'none' });
  });
});
