import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { brokerTokenUrl, BrokerRejectedError, requestBrokerToken } from '../../src/auth/broker-client.js';
import { ContractError, UnavailableError } from '../../src/errors.js';
import { HttpClient } from '../../src/fetch/http-client.js';
import { useNock } from '../helpers/nock.js';

const BROKER = 'https://backend.example.test';
const http = new HttpClient({ timeoutMs: 2_000, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 } });

useNock();
afterEach(() => nock.cleanAll());

describe('brokerTokenUrl', () => {
  it.each([
    [BROKER, `${BROKER}/api/gatekeeper-token?application_package=com.acme+shop%26x`],
    [`${BROKER}/`, `${BROKER}/api/gatekeeper-token?application_package=com.acme+shop%26x`],
    [`${BROKER}/base/api/gatekeeper-token`, `${BROKER}/base/api/gatekeeper-token?application_package=com.acme+shop%26x`],
  ])('%s', (input, expected) => {
    expect(brokerTokenUrl(input, 'com.acme shop&x').toString()).toBe(expected);
  });
});

describe('requestBrokerToken', () => {
  it('sends GET with the application package and reads the token', async () => {
    const scope = nock(BROKER, { reqheaders: { accept: 'application/json' }, badheaders: ['authorization'] })
      .get('/api/gatekeeper-token')
      .query({ application_package: 'com.acme.shop' })
      .reply(200, { access_token: 'tok', expires_in: 100 });
    await expect(requestBrokerToken(http, { brokerUrl: BROKER, applicationPackage: 'com.acme.shop' })).resolves.toEqual({
      access_token: 'tok',
      expires_in: 100,
    });
    expect(scope.isDone()).toBe(true);
  });

  it.each([400, 401, 403])('turns a %i problem into BrokerRejectedError with status and detail', async (status) => {
    nock(BROKER).get('/api/gatekeeper-token').query(true).reply(
      status,
      { type: 'about:blank', title: 'Bad Request', status, detail: 'unknown application_package' },
      {
        'content-type': 'application/problem+json',
      },
    );
    const error = (await requestBrokerToken(http, { brokerUrl: BROKER, applicationPackage: 'x' }).catch(
      (e: unknown) => e,
    )) as BrokerRejectedError;
    expect(error).toBeInstanceOf(BrokerRejectedError);
    expect(error.exitCode).toBe(3);
    expect(error.status).toBe(status);
    expect(error.message).toContain(`HTTP ${status} (Bad Request: unknown application_package)`);
  });

  it('turns a 503 into UnavailableError with its detail, and a 200 without a token into ContractError', async () => {
    nock(BROKER).get('/api/gatekeeper-token').query(true).reply(503, { status: 503, detail: 'auth server down' });
    const error = (await requestBrokerToken(http, { brokerUrl: BROKER, applicationPackage: 'x' }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.message).toContain('HTTP 503 (auth server down)');
    nock(BROKER).get('/api/gatekeeper-token').query(true).reply(200, { token: 'nope' });
    await expect(requestBrokerToken(http, { brokerUrl: BROKER, applicationPackage: 'x' })).rejects.toBeInstanceOf(ContractError);
  });
});
