import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthError, ContractError, UnavailableError } from '../../src/errors.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, HttpClient, parseRetryAfter } from '../../src/fetch/http-client.js';
import { MalformedBodyError } from '../../src/fetch/exchange.js';
import { VendorDownError } from '../../src/fetch/outage.js';
import { Pacer } from '../../src/fetch/pacer.js';
import { waitUntil } from '../helpers/cli.js';
import { virtualClock } from '../helpers/clock.js';
import { useNock } from '../helpers/nock.js';

const ORIGIN = 'https://api.example.test';
const url = new URL(`${ORIGIN}/thing?x=1`);

/** A client on a virtual clock: `sleeps` gets every wait it asks for (backoffs, and the pacer's holds). */
function client(sleeps: number[] = [], retries = 3): HttpClient {
  const clock = virtualClock();
  const recording = { ...clock, sleep: (ms: number, signal?: AbortSignal) => (sleeps.push(ms), clock.sleep(ms, signal)) };
  return new HttpClient({ timeoutMs: 2000, retry: { ...DEFAULT_RETRY_POLICY, retries }, clock: recording, random: () => 0.5 });
}

const json = (response: { text: string }) => {
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    throw new MalformedBodyError('not valid JSON');
  }
};

/** Answers the requests for /thing in turn, one `[status, body, headers]` each. */
function answerInTurn(...answers: [status: number, body?: nock.Body, headers?: Record<string, string>][]): void {
  const scope = nock(ORIGIN);
  for (const [status, body, headers] of answers) scope.get('/thing').query(true).reply(status, body, headers);
}

useNock();
afterEach(() => {
  expect(nock.isDone()).toBe(true);
  nock.cleanAll();
});

describe('HttpClient retries', () => {
  it.each([429, 500, 502, 503, 504])('retries %i and then succeeds', async (status) => {
    answerInTurn([status, { detail: 'busy' }], [200, { ok: 1 }]);
    const sleeps: number[] = [];
    await expect(client(sleeps).send({ method: 'GET', url }, json)).resolves.toEqual({ ok: 1 });
    expect(sleeps).toHaveLength(1);
  });

  it.each([400, 404])('does not retry %i, and reports it as the API failing (exit 4)', async (status) => {
    nock(ORIGIN).get('/thing').query(true).reply(status, { detail: 'Invalid page.' });
    const error = await client()
      .send({ method: 'GET', url }, json)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toBe(
      `GET https://api.example.test/thing: HTTP ${status} (Invalid page.) (after 1 attempt); check the URL or try again later`,
    );
  });

  it.each([401, 403])('does not retry %i and raises an AuthError (exit 3)', async (status) => {
    nock(ORIGIN).get('/thing').query(true).reply(status);
    await expect(client().send({ method: 'GET', url }, json)).rejects.toThrow(AuthError);
  });

  it('gives up after the retries with the attempt count, as exit 4', async () => {
    nock(ORIGIN).get('/thing').query(true).times(3).reply(503);
    const sleeps: number[] = [];
    const error = await client(sleeps, 2)
      .send({ method: 'GET', url }, json)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toBe(
      'GET https://api.example.test/thing: HTTP 503 (after 3 attempts); check the URL or try again later',
    );
    expect(sleeps).toHaveLength(2);
  });

  it('honours Retry-After in seconds, capped', async () => {
    answerInTurn([429, '', { 'Retry-After': '7' }], [429, '', { 'Retry-After': '100000' }], [200, { ok: 1 }]);
    const sleeps: number[] = [];
    await client(sleeps).send({ method: 'GET', url }, json);
    expect(sleeps).toEqual([7000, 120_000]); // a Retry-After is waited 2 minutes at the most
  });

  it.each(['-1', '1.5'])('takes Retry-After %s as unreadable: the backoff decides the wait, not "now"', async (value) => {
    answerInTurn([503, '', { 'Retry-After': value }], [200, { ok: 1 }]);
    const sleeps: number[] = [];
    await client(sleeps).send({ method: 'GET', url }, json);
    // random() is 0.5 in these tests: half the first backoff window, 500 ms.
    expect(sleeps).toEqual([250]);
  });

  it('retries network errors', async () => {
    nock(ORIGIN).get('/thing').query(true).replyWithError({ code: 'ECONNRESET', message: 'socket hang up' });
    nock(ORIGIN).get('/thing').query(true).reply(200, { ok: 2 });
    await expect(client().send({ method: 'GET', url }, json)).resolves.toEqual({ ok: 2 });
  });

  it('retries a body that is not JSON, then fails with exit 5', async () => {
    nock(ORIGIN).get('/thing').query(true).times(2).reply(200, '{"count": 3, "resu');
    const error = await client([], 1)
      .send({ method: 'GET', url }, json)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContractError);
    expect((error as Error).message).toMatch(/malformed body: not valid JSON \(after 2 attempts\)/);
  });

  it('says once what a request waits for when it has had no answer for a while, and nothing for one answered sooner', async () => {
    nock(ORIGIN).get('/thing').query(true).delay(400).reply(200, { late: true });
    nock(ORIGIN).get('/thing').query(true).reply(200, { ok: 1 });
    const lines: string[] = [];
    const logger = { debug() {}, info: (message: string) => lines.push(message), warn() {}, error() {} };
    const waiting = new HttpClient({ timeoutMs: 2000, slowAnswerMs: 100, logger, clock: virtualClock() });
    await expect(waiting.send({ method: 'GET', url, label: 'traffic 2026-11-20 page 1' }, json)).resolves.toEqual({ late: true });
    expect(lines).toEqual([
      'traffic 2026-11-20 page 1: GET https://api.example.test/thing: no answer yet after 0.1 s; waiting up to --timeout 2 s',
    ]);
    await expect(waiting.send({ method: 'GET', url }, json)).resolves.toEqual({ ok: 1 });
    expect(lines).toHaveLength(1);
  });

  it("a 200 whose body passes the caller's bound fails at once with exit 5, not retried", async () => {
    nock(ORIGIN).get('/thing').query(true).reply(200, 'x'.repeat(5000));
    const error = await client([], 3)
      .send({ method: 'GET', url, maxBody: { bytes: 1000, what: 'the most a page of 10 results takes' } }, json)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContractError);
    expect((error as Error).message).toBe(
      "GET https://api.example.test/thing: the body is longer than 1000 bytes, the most a page of 10 results takes; the server is not sending the API's pages",
    );
    expect(nock.isDone()).toBe(true);
  });

  it('times out a slow response and retries it', async () => {
    nock(ORIGIN).get('/thing').query(true).delay(500).reply(200, { late: true });
    nock(ORIGIN).get('/thing').query(true).reply(200, { ok: 3 });
    const fast = new HttpClient({ timeoutMs: 100, retry: { ...DEFAULT_RETRY_POLICY, retries: 1 }, clock: virtualClock() });
    await expect(fast.send({ method: 'GET', url }, json)).resolves.toEqual({ ok: 3 });
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-20T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    // Date.parse reads these as years long past; they are no HTTP date.
    expect(parseRetryAfter('-1', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('2026-11-20T10:00:05Z', now)).toBeUndefined();
    expect(parseRetryAfter('Friday, 20-Nov-26 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('grows exponentially under a cap, with full jitter', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(0, policy, () => 0.999)).toBe(99);
    expect(backoffDelay(3, policy, () => 0.999)).toBe(799);
    expect(backoffDelay(10, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(10, policy, () => 0)).toBe(0);
  });
});

describe('HttpClient with the run pacer', () => {
  function shared(retries = 3): { clients: HttpClient[]; clock: ReturnType<typeof virtualClock>; pacer: Pacer } {
    const clock = virtualClock();
    const pacer = new Pacer({ clock });
    const make = (): HttpClient =>
      new HttpClient({ timeoutMs: 2000, retry: { ...DEFAULT_RETRY_POLICY, retries }, clock, pacer, random: () => 0.5 });
    return { clients: [make(), make()], clock, pacer };
  }

  it('holds every request of the run for a 429 Retry-After, not only the refused one', async () => {
    const { clients, clock, pacer } = shared();
    answerInTurn([200, { ok: 0 }], [429, '', { 'Retry-After': '3' }], [200, { ok: 1 }], [200, { ok: 2 }]);
    await clients[0]!.send({ method: 'GET', url }, json);
    const started = clock.now();
    const refused = clients[0]!.send({ method: 'GET', url }, json);
    await waitUntil(() => pacer.stats().throttled === 1, 'the 429 to reach the pacer', 5000);
    // Sent by another unit after the 429: it waits the Retry-After too.
    const other = await clients[1]!.send({ method: 'GET', url }, json);
    expect(clock.now() - started).toBeGreaterThanOrEqual(3000);
    expect([other, await refused]).toEqual(expect.arrayContaining([{ ok: 1 }, { ok: 2 }]));
    // One request accepted in the 3 s before the 429: the run goes on at one per 3 s.
    expect(pacer.stats()).toEqual({ requests: 4, throttled: 1, paceRps: 0.33 });
  });

  it("counts each request and 429 into the caller's tally", async () => {
    const { clients } = shared();
    answerInTurn([503], [429, '', { 'Retry-After': '1' }], [200, { ok: 1 }]);
    const tally = { requests: 0, throttled: 0 };
    await clients[0]!.send({ method: 'GET', url, tally }, json);
    expect(tally).toEqual({ requests: 3, throttled: 1 });
  });

  it('ends with VendorDownError when the request after one that used its retries fails the same way', async () => {
    const { clients } = shared(1);
    nock(ORIGIN).get('/thing').query(true).times(3).replyWithError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    const first = await clients[0]!.send({ method: 'GET', url, label: 'traffic 2026-11-20 page 1' }, json).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(UnavailableError);
    expect(first).not.toBeInstanceOf(VendorDownError);
    const next = await clients[1]!.send({ method: 'GET', url }, json).catch((e: unknown) => e);
    expect(next).toBeInstanceOf(VendorDownError);
    expect((next as Error).message).toMatch(
      /^the API is unreachable or failing: traffic 2026-11-20 page 1 failed 2 attempts, and the next request failed the same way \(network error: .*\); check the URL or try again later$/,
    );
  });

  it('does not count a 429 or an answer as the vendor down', async () => {
    const { clients } = shared(0);
    answerInTurn([502], [404, { detail: 'Not found.' }], [502], [200, { ok: 1 }]);
    await expect(clients[0]!.send({ method: 'GET', url }, json)).rejects.toThrow(/HTTP 502/);
    // The vendor answered (a 404): it is up, so the next 502 is a unit's failure, not the end of the run.
    await expect(clients[0]!.send({ method: 'GET', url }, json)).rejects.toThrow(/HTTP 404/);
    const error = await clients[1]!.send({ method: 'GET', url }, json).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).not.toBeInstanceOf(VendorDownError);
    await expect(clients[1]!.send({ method: 'GET', url }, json)).resolves.toEqual({ ok: 1 });
  });
});
