import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordOf, REQUEST_LOG_CAPACITY, RequestLog } from '../../src/sandbox/request-log.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import type { RecordedRequest } from '../../src/sandbox/types.js';
import { basic, dayParams, metricUrl, NOW, YESTERDAY } from './helpers.js';

const numbered = (n: number): RecordedRequest => recordOf('GET', new URL(`http://sandbox.invalid/n/${n}`));

describe('the request log: a ring of the newest requests', () => {
  it('keeps the newest `capacity` requests, oldest first, however many more arrive', () => {
    const log = new RequestLog(3);
    expect(log.entries()).toEqual([]);
    for (let n = 1; n <= 2; n += 1) log.keep(numbered(n));
    expect(log.entries().map((entry) => entry.path)).toEqual(['/n/1', '/n/2']);
    for (let n = 3; n <= 3_000; n += 1) log.keep(numbered(n));
    expect(log.entries().map((entry) => entry.path)).toEqual(['/n/2998', '/n/2999', '/n/3000']);
    log.keep(numbered(3_001));
    expect(log.entries().map((entry) => entry.path)).toEqual(['/n/2999', '/n/3000', '/n/3001']);
    expect(log.counts()).toEqual({ received: 3_001, unrouted: 0, capacity: 3 });
  });

  it('counts unrouted requests without keeping them', () => {
    const log = new RequestLog(2);
    log.keep(numbered(1));
    for (let n = 0; n < 100; n += 1) log.countUnrouted();
    expect(log.entries().map((entry) => entry.path)).toEqual(['/n/1']);
    expect(log.counts()).toEqual({ received: 101, unrouted: 100, capacity: 2 });
  });

  it('hands out a copy of its list, of the live records', () => {
    const log = new RequestLog(2);
    const record = numbered(1);
    log.keep(record);
    const listed = log.entries();
    log.keep(numbered(2));
    expect(listed).toHaveLength(1);
    record.status = 200;
    expect(log.entries()[0]!.status).toBe(200);
  });

  it('keeps 5000 by default: many times what a test of one sandbox reads', () => {
    expect(REQUEST_LOG_CAPACITY).toBe(5000);
    expect(new RequestLog().capacity).toBe(REQUEST_LOG_CAPACITY);
  });
});

describe("a request's record", () => {
  it('keeps a plain request whole', () => {
    const query = new URLSearchParams(dayParams(YESTERDAY, { page: '2', page_size: '7' }));
    const url = new URL(`http://127.0.0.1:1/api/bi/area-metrics/traffic/?${query.toString()}`);
    expect(recordOf('GET', url)).toEqual({
      method: 'GET',
      path: '/api/bi/area-metrics/traffic/',
      query: dayParams(YESTERDAY, { page: '2', page_size: '7' }),
      status: 0,
      authorized: false,
    });
    // The last value of a repeated parameter, as the routes read it.
    expect(recordOf('GET', new URL('http://sandbox.invalid/x?page=1&page=3')).query).toEqual({ page: '3' });
  });

  it('cuts a long path, a long query and many parameters to a bound', () => {
    const long = 'y'.repeat(10_000);
    const many = Array.from({ length: 500 }, (_, index) => `k${index}=v`).join('&');
    const record = recordOf('GET', new URL(`http://sandbox.invalid/${long}?a=${long}&${many}`));
    expect(record.path).toBe(`/${'y'.repeat(255)}`);
    expect(record.query).toEqual({ a: 'y'.repeat(510) });
    const spread = recordOf('GET', new URL(`http://sandbox.invalid/?${many}`));
    expect(Object.keys(spread.query)).toEqual(Array.from({ length: 16 }, (_, index) => `k${index}`));
  });
});

describe('the sandbox keeps its log bounded', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ stores: 2, zones: 2, days: 2, now: () => NOW, requestLogCapacity: 50 });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('lists the newest requests and counts the unrouted ones (404, 405) without keeping them', async () => {
    const url = metricUrl(sandbox, 'traffic', dayParams(YESTERDAY));
    for (let n = 0; n < 120; n += 1) {
      await (await fetch(`${url}&n=${n}`, { headers: { authorization: basic('demo-client', 'demo-secret') } })).arrayBuffer();
      await (await fetch(`${sandbox.url}/nowhere/${n}`)).arrayBuffer();
      await (await fetch(`${sandbox.url}/oauth2/token`)).arrayBuffer();
    }
    expect(sandbox.requests.map((entry) => entry.query.n)).toEqual(Array.from({ length: 50 }, (_, index) => String(70 + index)));
    expect(sandbox.requestCounts()).toEqual({ received: 360, unrouted: 240, capacity: 50 });
    const listed = (await (await fetch(`${sandbox.url}/_sandbox/requests`)).json()) as { requests: RecordedRequest[] };
    expect(listed).toEqual({ requests: expect.any(Array), received: 361, unrouted: 240, capacity: 50 });
    // The list is read before its own request is answered: the oldest went for it.
    expect(listed.requests.map((entry) => entry.query.n ?? entry.path)).toEqual([
      ...Array.from({ length: 49 }, (_, index) => String(71 + index)),
      '/_sandbox/requests',
    ]);
  });
});
