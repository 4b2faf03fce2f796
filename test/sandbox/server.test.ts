import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { useSandbox } from '../helpers/vendor.js';
import { isLoopback } from '../../src/sandbox/http.js';
import { allPages, basic, dayParams, getJson, metricUrl, NOW, YESTERDAY, type Envelope } from './helpers.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';

const sandbox = useSandbox({ stores: 12, zones: 6, days: 3, seed: 1, now: () => NOW });

describe('sandbox metrics API: authentication', () => {
  it('answers 401 with a Basic challenge and a JSON detail without or with wrong credentials', async () => {
    const url = metricUrl(sandbox, 'traffic', dayParams(YESTERDAY));
    const missing = await fetch(url);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Basic realm="area-metrics"');
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await missing.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
    const wrong = await fetch(url, { headers: { authorization: basic(sandbox.clientId, 'nope') } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="area-metrics"');
    expect(await wrong.json()).toEqual({ detail: 'Invalid username/password.' });
    const bearer = await fetch(url, { headers: { authorization: 'Bearer abc' } });
    expect(bearer.status).toBe(401);
    const ok = await fetch(url, { headers: { authorization: basic(sandbox.clientId, sandbox.clientSecret) } });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it('records every request with its status and whether it was authorized, never the credentials', async () => {
    const before = sandbox.requests.length;
    await fetch(metricUrl(sandbox, 'unique-users', dayParams(YESTERDAY)), {
      headers: { authorization: basic(sandbox.clientId, 'wrong-secret-value') },
    }).then((response) => response.arrayBuffer());
    await getJson(sandbox, metricUrl(sandbox, 'unique-users', dayParams(YESTERDAY, { store_code: 'S002' })));
    const recorded = sandbox.requests.slice(before);
    expect(recorded).toEqual([
      { method: 'GET', path: '/api/bi/area-metrics/unique-users/', query: dayParams(YESTERDAY), status: 401, authorized: false },
      {
        method: 'GET',
        path: '/api/bi/area-metrics/unique-users/',
        query: dayParams(YESTERDAY, { store_code: 'S002' }),
        status: 200,
        authorized: true,
      },
    ]);
    const { body } = await getJson(sandbox, `${sandbox.url}/_sandbox/requests`);
    const text = JSON.stringify(body);
    expect(text).toContain('/api/bi/area-metrics/unique-users/');
    expect(text).not.toContain(sandbox.clientSecret);
    expect(text).not.toContain('wrong-secret-value');
  });
});

describe('sandbox metrics API: filters and envelope', () => {
  it('serves all three resources with and without the trailing slash', async () => {
    for (const metric of METRIC_NAMES) {
      for (const slash of [true, false]) {
        const { status, body } = await getJson(sandbox, metricUrl(sandbox, metric, dayParams(YESTERDAY), slash));
        expect(status).toBe(200);
        const envelope = body as Envelope;
        expect(Object.keys(envelope)).toEqual(['count', 'next', 'previous', 'results']);
        expect(envelope.count).toBe(12);
        expect(envelope.next).toBeNull();
        expect(envelope.previous).toBeNull();
        expect(envelope.results).toEqual(
          sandbox.results(metric as 'traffic', { gte: `${YESTERDAY}T00:00:00Z`, lte: `${YESTERDAY}T23:59:59Z` }),
        );
        expect(Object.keys(envelope.results[0]!.values[0]!)[0]).toBe('zone');
      }
    }
  });

  it('answers 400 with a JSON error for missing or unparseable time filters', async () => {
    const missing = await getJson(sandbox, metricUrl(sandbox, 'traffic', { datetime_lte: `${YESTERDAY}T23:59:59Z` }));
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ errors: { datetime_gte: ['This field is required.'] } });
    const bad = await getJson(
      sandbox,
      metricUrl(sandbox, 'traffic', { datetime_gte: 'yesterday', datetime_lte: `${YESTERDAY}T23:59:59Z` }),
    );
    expect(bad.status).toBe(400);
    expect((bad.body as { detail: string }).detail).toMatch(/^datetime_gte: /);
    // An unencoded '+' is a space in a query string: that is the client's bug, and the sandbox says so.
    const raw = `${sandbox.url}/api/bi/area-metrics/traffic/?datetime_gte=2026-11-21T00:00:00+02:00&datetime_lte=2026-11-21T23:59:59Z`;
    expect((await getJson(sandbox, raw)).status).toBe(400);
  });

  it('accepts offsets in the time filters', async () => {
    const { status, body } = await getJson(
      sandbox,
      metricUrl(sandbox, 'traffic', { datetime_gte: '2026-11-21T02:00:00+02:00', datetime_lte: '2026-11-22T01:59:59+02:00' }),
    );
    expect(status).toBe(200);
    expect((body as Envelope).count).toBe(12);
  });

  it('filters by store_code, and an unknown store has no results', async () => {
    const one = (await getJson(sandbox, metricUrl(sandbox, 'avg-screen-time', dayParams(YESTERDAY, { store_code: 'S003' }))))
      .body as Envelope;
    expect(one.count).toBe(1);
    expect(one.results[0]!.store_code).toBe('S003');
    const none = await getJson(sandbox, metricUrl(sandbox, 'avg-screen-time', dayParams(YESTERDAY, { store_code: 'X9' })));
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('pages with absolute links that carry the filters, page and page_size', async () => {
    const params = { datetime_gte: '2026-11-19T00:00:00Z', datetime_lte: '2026-11-21T23:59:59Z', page_size: '5' };
    const pages = await allPages(sandbox, metricUrl(sandbox, 'unique-users', params));
    expect(pages).toHaveLength(8); // 36 results
    expect(pages.every((page) => page.count === 36)).toBe(true);
    expect(pages.map((page) => page.results.length)).toEqual([5, 5, 5, 5, 5, 5, 5, 1]);
    const first = pages[0]!;
    const next = new URL(first.next!);
    expect(next.origin).toBe(sandbox.url);
    expect(next.pathname).toBe('/api/bi/area-metrics/unique-users/');
    expect(Object.fromEntries(next.searchParams)).toEqual({ ...params, page: '2' });
    expect(first.previous).toBeNull();
    expect(new URL(pages[1]!.previous!).searchParams.get('page')).toBe('1');
    expect(pages[7]!.next).toBeNull();
    const served = pages.flatMap((page) => page.results);
    expect(served).toEqual(sandbox.results('unique-users', { gte: params.datetime_gte, lte: params.datetime_lte }));
    expect(new Set(served.map((result) => `${result.store_code}|${result.date}`)).size).toBe(36);
  });

  it('builds links from the Host the client used', async () => {
    const port = new URL(sandbox.url).port;
    const { body } = await getJson(
      sandbox,
      `http://localhost:${port}/api/bi/area-metrics/traffic?${new URLSearchParams(dayParams(YESTERDAY, { page_size: '4' })).toString()}`,
    );
    expect((body as Envelope).next).toMatch(new RegExp(`^http://localhost:${port}/api/bi/area-metrics/traffic\\?`));
  });

  it('answers 404 "Invalid page." beyond the last page, and page 1 exists when count is 0', async () => {
    const beyond = await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams(YESTERDAY, { page_size: '5', page: '4' })));
    expect(beyond.status).toBe(404);
    expect(beyond.body).toEqual({ detail: 'Invalid page.' });
    const notNumber = await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams(YESTERDAY, { page: 'last' })));
    expect(notNumber.status).toBe(404);
    const emptyFirst = await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams('2020-01-01', { page: '1' })));
    expect(emptyFirst.status).toBe(200);
    expect(emptyFirst.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    expect((await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams('2020-01-01', { page: '2' })))).status).toBe(404);
  });

  it('answers 400 for a page_size that is not a positive integer', async () => {
    for (const pageSize of ['0', '-1', 'abc', '1.5']) {
      const { status, body } = await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams(YESTERDAY, { page_size: pageSize })));
      expect(status).toBe(400);
      expect(body).toMatchObject({ errors: { page_size: ['A positive integer is required.'] } });
    }
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    expect((await getJson(sandbox, `${sandbox.url}/api/bi/area-metrics/visits/`)).status).toBe(404);
    const post = await fetch(metricUrl(sandbox, 'traffic', dayParams(YESTERDAY)), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect(await post.json()).toEqual({ detail: 'Method "POST" not allowed.' });
    const put = await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST, GET');
    await put.arrayBuffer();
    const unknownAdmin = await fetch(`${sandbox.url}/_sandbox/nothing`);
    expect(unknownAdmin.status).toBe(404);
    await unknownAdmin.arrayBuffer();
  });
});

describe('sandbox page_size cap', () => {
  let big: Sandbox;
  beforeAll(async () => {
    big = await startSandbox({ stores: 10_001, zones: 1, days: 1, seed: 1, now: () => NOW });
  });
  afterAll(async () => {
    await big.close();
  });

  it('defaults to 1000 and silently caps page_size at 10000', async () => {
    const defaults = (await getJson(big, metricUrl(big, 'unique-users', dayParams(YESTERDAY)))).body as Envelope;
    expect(defaults.count).toBe(10_001);
    expect(defaults.results).toHaveLength(1000);
    expect(new URL(defaults.next!).searchParams.get('page_size')).toBe('1000');
    const capped = (await getJson(big, metricUrl(big, 'unique-users', dayParams(YESTERDAY, { page_size: '50000' })))).body as Envelope;
    expect(capped.results).toHaveLength(10_000);
    const next = new URL(capped.next!);
    expect(next.searchParams.get('page_size')).toBe('10000');
    expect(next.searchParams.get('page')).toBe('2');
    const last = (await getJson(big, capped.next!)).body as Envelope;
    expect(last.results).toHaveLength(1);
    expect(last.next).toBeNull();
  });
});

describe('sandbox admin endpoints', () => {
  it('sets and shows faults over POST /_sandbox/faults, rejecting bad bodies', async () => {
    const set = await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', body: JSON.stringify({ failNth: { n: 1, status: 503 } }) });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({ faults: { failNth: { n: 1, status: 503 } } });
    expect(sandbox.faults()).toEqual({ failNth: { n: 1, status: 503 } });
    expect((await getJson(sandbox, metricUrl(sandbox, 'traffic', dayParams(YESTERDAY)))).status).toBe(503);
    const shown = await getJson(sandbox, `${sandbox.url}/_sandbox/faults`);
    expect(shown.body).toEqual({ faults: { failNth: { n: 1, status: 503 } } });
    for (const body of ['not json', JSON.stringify({ failNth: { n: 0, status: 503 } }), JSON.stringify({ unknownSwitch: true })]) {
      const rejected = await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', body });
      expect(rejected.status).toBe(400);
      await rejected.arrayBuffer();
    }
    expect(sandbox.faults()).toEqual({ failNth: { n: 1, status: 503 } });
    const cleared = await fetch(`${sandbox.url}/_sandbox/faults`, { method: 'POST', body: '{}' });
    expect(await cleared.json()).toEqual({ faults: {} });
  });

  it('treats only loopback addresses as admin clients', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('127.8.9.10')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('10.0.0.5')).toBe(false);
    expect(isLoopback('::ffff:192.168.1.2')).toBe(false);
    expect(isLoopback('fe80::1')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });
});

describe('sandbox concurrency', () => {
  it('answers 200 concurrent requests without errors', async () => {
    const urls = Array.from({ length: 200 }, (_, index) =>
      metricUrl(
        sandbox,
        METRIC_NAMES[index % METRIC_NAMES.length]!,
        dayParams(YESTERDAY, { page_size: '3', page: String(1 + (index % 4)) }),
      ),
    );
    const answers = await Promise.all(urls.map((url) => getJson(sandbox, url)));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 200 }, () => 200));
    expect(answers.every((answer) => (answer.body as Envelope).results.length === 3)).toBe(true);
  });
});
