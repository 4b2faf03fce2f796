import { describe, expect, it } from 'vitest';
import { startFakeAuthServer } from '../../helpers/fake-auth-server.js';
import { ANDROID_APP, WEB_APP, brokerFetch, injectTestBroker, tokenUrl, type TestBroker, useCleanups } from '../broker-harness.js';

const stops = useCleanups();

/** The value of one sample line (`name{labels} value`) of the Prometheus text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(broker: TestBroker): Promise<string> {
  const response = await brokerFetch(new URL('/metrics', broker.url));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe('GET /metrics', () => {
  it('counts token requests by outcome, auth calls by status, and shows the back-off per platform', async () => {
    const auth = await startFakeAuthServer();
    stops.push(() => auth.close());
    const broker = await injectTestBroker({ authUrl: auth.url, clientId: auth.clientId, clientSecret: auth.clientSecret });
    stops.push(() => broker.close());
    expect((await brokerFetch(tokenUrl(broker, ANDROID_APP))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await brokerFetch(tokenUrl(broker, ANDROID_APP))).status).toBe(200);
    expect((await brokerFetch(tokenUrl(broker, 'com.unknown'))).status).toBe(400);
    auth.behave({ status: 503, body: '{}' });
    expect((await brokerFetch(tokenUrl(broker, WEB_APP))).status).toBe(503);

    const text = await scrape(broker);
    expect(sample(text, 'area_metrics_broker_token_requests_total{outcome="miss",status="200"}')).toBe(1);
    expect(sample(text, 'area_metrics_broker_token_requests_total{outcome="hit",status="200"}')).toBe(3);
    expect(sample(text, 'area_metrics_broker_token_requests_total{outcome="error",status="400"}')).toBe(1);
    expect(sample(text, 'area_metrics_broker_token_requests_total{outcome="error",status="503"}')).toBe(1);
    expect(sample(text, 'area_metrics_broker_auth_requests_total{status="200"}')).toBe(1);
    expect(sample(text, 'area_metrics_broker_auth_requests_total{status="503"}')).toBe(1);
    expect(sample(text, 'area_metrics_broker_auth_request_duration_seconds_count')).toBe(2);
    expect(sample(text, 'area_metrics_broker_auth_backoff{platform="web"}')).toBe(1);
    expect(sample(text, 'area_metrics_broker_auth_backoff{platform="android"}')).toBe(0);
    expect(text).not.toContain('area_metrics_broker_redis_up'); // no Redis configured
    expect(text).not.toContain(auth.clientSecret);
  });
});
