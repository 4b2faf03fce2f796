import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { waitUntil } from '../helpers/cli.js';
import { useSandbox } from '../helpers/vendor.js';
import { allPages, basic, dayParams, getJson, metricUrl, NOW, YESTERDAY, type Envelope } from './helpers.js';

const sandbox = useSandbox({ stores: 12, zones: 4, days: 2, seed: 4, now: () => NOW });

const url = (extra: Record<string, string> = {}) => metricUrl(sandbox, 'traffic', dayParams(YESTERDAY, extra));

async function statuses(count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let index = 0; index < count; index += 1) seen.push((await getJson(sandbox, url())).status);
  return seen;
}

describe('sandbox fault switches', () => {
  it('failNth fails the Nth metric request and the next times-1, counted from when set', async () => {
    sandbox.setFaults({ failNth: { n: 2, status: 503, times: 2 } });
    expect(await statuses(5)).toEqual([200, 503, 503, 200, 200]);
    sandbox.setFaults({ failNth: { n: 1, status: 500 } });
    expect(await statuses(2)).toEqual([500, 200]);
  });

  it('failNth applies even before authentication, like a failing proxy', async () => {
    sandbox.setFaults({ failNth: { n: 1, status: 502 } });
    expect((await fetch(url())).status).toBe(502);
  });

  it('rateLimitNth answers 429 with Retry-After', async () => {
    sandbox.setFaults({ rateLimitNth: { n: 1, retryAfterSeconds: 3 } });
    const limited = await getJson(sandbox, url());
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect((limited.body as { detail: string }).detail).toMatch(/throttled/);
    expect(await statuses(1)).toEqual([200]);
  });

  it('truncateNth answers 200 with a body that is not valid JSON', async () => {
    sandbox.setFaults({ truncateNth: { n: 2 } });
    await getJson(sandbox, url());
    const response = await fetch(url(), { headers: { authorization: basic(sandbox.clientId, sandbox.clientSecret) } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.length).toBeGreaterThan(0);
    expect(() => JSON.parse(text) as unknown).toThrow();
    expect(
      JSON.parse(await (await fetch(url(), { headers: { authorization: basic(sandbox.clientId, sandbox.clientSecret) } })).text()),
    ).toHaveProperty('count', 12);
  });

  it('latencyMs delays metric requests, not token requests', async () => {
    // Long enough that the token request overtakes it on a busy machine too.
    sandbox.setFaults({ latencyMs: 1_000 });
    const started = performance.now();
    const seen = sandbox.requests.length;
    const pending = getJson(sandbox, url());
    await waitUntil(() => sandbox.requests.length > seen, 'the metric request to arrive');
    const metricRecord = sandbox.requests.at(-1)!;
    expect(metricRecord.status).toBe(0); // still waiting
    const token = await fetch(`${sandbox.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(sandbox.clientId, sandbox.clientSecret) },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    await token.arrayBuffer();
    expect(metricRecord.status).toBe(0); // the token answer overtook the delayed metric request
    expect((await pending).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it('foreignNextOrigin puts next and previous on another origin', async () => {
    sandbox.setFaults({ foreignNextOrigin: 'http://127.0.0.1:9/ignored/path' });
    const first = (await getJson(sandbox, url({ page_size: '5' }))).body as Envelope;
    expect(first.next).toMatch(/^http:\/\/127\.0\.0\.1:9\/api\/bi\/area-metrics\/traffic\/\?/);
    const local = first.next!.replace('http://127.0.0.1:9', sandbox.url);
    const second = (await getJson(sandbox, local)).body as Envelope;
    expect(second.previous).toMatch(/^http:\/\/127\.0\.0\.1:9\//);
  });

  it('repeatResult makes each later page repeat a result of the previous page and omit one', async () => {
    sandbox.setFaults({ repeatResult: true });
    const pages = await allPages(sandbox, url({ page_size: '5' }));
    const served = pages.flatMap((page) => page.results);
    expect(pages[0]!.count).toBe(12);
    expect(served).toHaveLength(12);
    const keys = served.map((result) => `${result.store_code}|${result.date}`);
    expect(new Set(keys).size).toBe(10); // two later pages each repeat one
    expect(keys[5]).toBe(keys[4]);
    const truth = sandbox.results('traffic', { gte: `${YESTERDAY}T00:00:00Z`, lte: `${YESTERDAY}T23:59:59Z` });
    expect(new Set(truth.map((result) => JSON.stringify(result))).size).toBe(12);
  });

  it('validates faults given to setFaults and startSandbox', async () => {
    expect(() => sandbox.setFaults({ failNth: { n: 0, status: 503 } })).toThrow(UsageError);
    // A 1xx would leave the client hanging, a 204/304 drops the body: a failure is 400..599.
    expect(() => sandbox.setFaults({ failNth: { n: 1, status: 101 } })).toThrow(/failNth\.status/);
    expect(() => sandbox.setFaults({ tokenFailNth: { n: 1, status: 204 } })).toThrow(/tokenFailNth\.status/);
    expect(() => sandbox.setFaults({ foreignNextOrigin: 'ftp://x' })).toThrow(/foreignNextOrigin/);
    await expect(startSandbox({ faults: { latencyMs: -1 } })).rejects.toThrow(UsageError);
    await expect(startSandbox({ stores: 0 })).rejects.toThrow(/stores/);
  });
});
