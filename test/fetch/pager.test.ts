import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../../src/fetch/http-client.js';
import type { HttpResponse } from '../../src/fetch/exchange.js';
import { Pacer } from '../../src/fetch/pacer.js';
import { followPages, PagingAnomaly, type PageLinks } from '../../src/fetch/pager.js';
import { virtualClock } from '../helpers/clock.js';
import { useNock } from '../helpers/nock.js';

const ORIGIN = 'https://api.example.test';
const baseUrl = new URL(ORIGIN);

const parse = (response: HttpResponse): PageLinks => {
  const body = JSON.parse(response.text) as { count: number; next: string | null; results: unknown[] };
  return { count: body.count, next: body.next, size: body.results.length };
};

async function pages(): Promise<number[]> {
  const client = new HttpClient({ timeoutMs: 2000, retry: { ...DEFAULT_RETRY_POLICY, retries: 3 }, clock: virtualClock() });
  const seen: number[] = [];
  for await (const page of followPages(new URL(`${ORIGIN}/m/?page=1`), { client, baseUrl, headers: {}, parse })) seen.push(page.number);
  return seen;
}

/** Answers the requests for pages of `/m/` in the order given: each `[page, status, body]` once. */
function serve(...answers: [page: number, status: number, body?: object][]): void {
  const scope = nock(ORIGIN);
  for (const [page, status, body] of answers)
    scope
      .get('/m/')
      .query({ page: String(page) })
      .reply(status, body);
}

/** A first page of two results of `count`, linking to page 2. */
const firstPage = (count: number) => ({ count, next: `${ORIGIN}/m/?page=2`, results: [1, 2] });

useNock();
afterEach(() => {
  expect(nock.isDone()).toBe(true);
  nock.cleanAll();
});

describe('followPages and a 404', () => {
  it('takes a 404 after the first page as a paging anomaly (the set shrank), asked once, not retried', async () => {
    serve([1, 200, firstPage(4)], [2, 404, { detail: 'Invalid page.' }]);
    const error = await pages().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PagingAnomaly);
    expect((error as Error).message).toBe('page 2 is gone (HTTP 404): the results changed while paging');
  });

  it('keeps a 404 on the first page a wrong URL (exit 4)', async () => {
    serve([1, 404, { detail: 'Not found.' }]);
    const error = await pages().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toMatch(/HTTP 404 \(Not found\.\) \(after 1 attempt\); check the URL/);
  });

  it('still retries a 503 on a later page', async () => {
    serve([1, 200, firstPage(3)], [2, 503], [2, 200, { count: 3, next: null, results: [3] }]);
    expect(await pages()).toEqual([1, 2]);
  });
});

describe('followPages and the pacer', () => {
  it("tells the run's pacer the pages the first answer announces, so a large run need not start slow", async () => {
    nock(ORIGIN)
      .get('/m/')
      .query({ page: '1' })
      .reply(200, { count: 4, next: `${ORIGIN}/m/?page=2`, results: [1, 2] })
      .get('/m/')
      .query({ page: '2' })
      .reply(200, { count: 4, next: null, results: [3, 4] });
    const clock = virtualClock();
    // 1,000 units of 2 pages: 2,000 requests, 20 of which may be in flight before any limit is known.
    const pacer = new Pacer({ clock, units: 1000 });
    const client = new HttpClient({ timeoutMs: 2000, clock, pacer });
    for await (const page of followPages(new URL(`${ORIGIN}/m/?page=1`), { client, baseUrl, headers: {}, parse })) void page;
    // Two answers accepted would let the slow start have 2 in flight; the run's size lets 8 go at once.
    const granted: unknown[] = [];
    for (let call = 0; call < 8; call++) void pacer.acquire(pacer.outage.join()).then((ticket) => granted.push(ticket));
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(granted).toHaveLength(8);
  });
});
