import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthError, ContractError, IncompleteError, UnavailableError } from '../../src/errors.js';
import { basicAuthorization } from '../../src/fetch/basic-auth.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../../src/fetch/http-client.js';
import { METRICS } from '../../src/metrics/descriptors.js';
import { fetchUnit, type UnitData, type UnitFetchOptions } from '../../src/metrics/unit.js';
import { virtualClock } from '../helpers/clock.js';
import { useNock } from '../helpers/nock.js';

const ORIGIN = 'https://vendor.example.test';
const PATH = '/api/bi/area-metrics/unique-users/';
const credentials = { clientId: 'client-1', clientSecret: 'very-secret-value' };
const unit = { metric: METRICS['unique-users'], day: '2026-11-20' };
const windowQuery = { datetime_gte: '2026-11-20T00:00:00Z', datetime_lte: '2026-11-20T23:59:59Z' };

function result(store: string, hour = '00', users = 1) {
  return {
    store_code: store,
    date: `2026-11-20T${hour}:00:00-02:00`,
    granularity: 'daily',
    values: [
      { zone: 'Zb', unique_users: users },
      { zone: 'Za', unique_users: users + 1 },
    ],
  };
}

function envelope(count: number, results: unknown[], next: string | null, previous: string | null = null) {
  return { count, next, previous, results };
}

const link = (page: number, size = 2) =>
  `${ORIGIN}${PATH}?${new URLSearchParams({ ...windowQuery, page: String(page), page_size: String(size) }).toString()}`;

/** The query of page `n` of the unit as the fetch asks it: the first page without a page number. */
const pageQuery = (n: number) => ({ ...windowQuery, ...(n === 1 ? {} : { page: String(n) }), page_size: '2' });

/** Serves the unit's pages in order, each `times` times (once for each fetch of the unit). */
function servePages(pages: readonly ReturnType<typeof envelope>[], times = 1): void {
  const scope = nock(ORIGIN);
  pages.forEach((body, index) =>
    scope
      .get(PATH)
      .query(pageQuery(index + 1))
      .times(times)
      .reply(200, body),
  );
}

function options(overrides: Partial<UnitFetchOptions> = {}): UnitFetchOptions {
  return {
    client: new HttpClient({ timeoutMs: 2000, retry: { ...DEFAULT_RETRY_POLICY, retries: 2 }, clock: virtualClock() }),
    baseUrl: new URL(ORIGIN),
    headers: { authorization: basicAuthorization(credentials) },
    pageSize: 2,
    onInvalid: 'fail',
    encoding: { format: 'ndjson', shape: 'rows' },
    ...overrides,
  };
}

/** The unit's output rows, decoded back from its NDJSON pieces. */
function rowsWritten(data: UnitData): { store_code: string; zone: string }[] {
  return Buffer.concat(data.pieces)
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { store_code: string; zone: string });
}

useNock();
afterEach(() => {
  nock.cleanAll();
});

describe('fetchUnit paging', () => {
  it('follows absolute next links over 3 pages and sorts rows that arrived unsorted', async () => {
    servePages([
      envelope(5, [result('S3'), result('S1')], link(2)),
      envelope(5, [result('S5'), result('S2')], link(3), link(1)),
      envelope(5, [result('S4')], null, link(2)),
    ]);
    const data = await fetchUnit(unit, options());
    expect(data.pages).toBe(3);
    expect(data.count).toBe(5);
    expect(rowsWritten(data).map((row) => `${row.store_code}/${row.zone}`)).toEqual([
      'S1/Za',
      'S1/Zb',
      'S2/Za',
      'S2/Zb',
      'S3/Za',
      'S3/Zb',
      'S4/Za',
      'S4/Zb',
      'S5/Za',
      'S5/Zb',
    ]);
    expect(nock.isDone()).toBe(true);
  });

  it('sends the exact Basic credentials on every page and never puts them in the URL', async () => {
    const expected = `Basic ${Buffer.from('client-1:very-secret-value').toString('base64')}`;
    const seen: string[] = [];
    const authorizations: unknown[] = [];
    nock(ORIGIN)
      .get(PATH)
      .query(true)
      .times(2)
      .reply(function (uri) {
        seen.push(uri);
        authorizations.push(this.req.headers.authorization);
        return uri.includes('page=2')
          ? [200, envelope(3, [result('S3')], null)]
          : [200, envelope(3, [result('S1'), result('S2')], link(2))];
      });
    await fetchUnit(unit, options());
    expect(authorizations).toEqual([expected, expected]);
    expect(seen).toHaveLength(2);
    for (const uri of seen) {
      expect(uri).not.toContain('client-1');
      expect(uri).not.toContain('very-secret-value');
    }
  });

  it('rebases a next link on another origin onto the base URL and never calls the foreign host', async () => {
    const foreign = nock('http://internal.example.test').get(/.*/).reply(500);
    servePages([envelope(2, [result('S1')], link(2).replace(ORIGIN, 'http://internal.example.test')), envelope(2, [result('S2')], null)]);
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (message: string) => warnings.push(message) };
    const data = await fetchUnit(unit, options({ logger }));
    expect(data.count).toBe(2);
    expect(foreign.isDone()).toBe(false);
    expect(warnings.join('\n')).toMatch(/rebased onto https:\/\/vendor\.example\.test/);
  });
});

describe('fetchUnit completeness', () => {
  it('fetches the unit again when a result repeats, and succeeds when the second fetch is whole', async () => {
    servePages([envelope(3, [result('S1'), result('S2')], link(2)), envelope(3, [result('S2')], null)]); // the first fetch
    servePages([envelope(3, [result('S1'), result('S2')], link(2)), envelope(3, [result('S3')], null)]); // the second
    const data = await fetchUnit(unit, options());
    expect(data.attempts).toBe(2);
    expect(rowsWritten(data)).toHaveLength(6);
  });

  it('fails with exit 6 after 3 incomplete fetches, naming expected and received', async () => {
    nock(ORIGIN)
      .get(PATH)
      .query(true)
      .times(3)
      .reply(200, envelope(4, [result('S1'), result('S2')], null));
    const error = await fetchUnit(unit, options()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IncompleteError);
    expect((error as Error).message).toBe(
      'unique-users 2026-11-20: incomplete data after 3 fetches: expected 4 results, received 2; nothing written for this unit, retry later',
    );
  });

  it('sees one store and instant spelled twice as a repeat (instants are compared, not their text)', async () => {
    const utc = { ...result('S1', '02'), date: '2026-11-20T04:00:00Z' };
    const offset = { ...result('S1', '02'), date: '2026-11-20T04:00:00+00:00' };
    nock(ORIGIN)
      .get(PATH)
      .query(true)
      .times(3)
      .reply(200, envelope(2, [utc, offset], null));
    await expect(fetchUnit(unit, options())).rejects.toThrow(/expected 2 results, received 2, 1 repeated/);
  });

  it('does not count records set aside as repeats: two broken records with one date leave the valid one written', async () => {
    const broken = { ...result('S1'), store_code: null };
    nock(ORIGIN)
      .get(PATH)
      .query(true)
      .reply(200, envelope(3, [broken, broken, result('S2')], null));
    const data = await fetchUnit(unit, options({ onInvalid: 'skip' }));
    expect(rowsWritten(data).map((row) => row.store_code)).toEqual(['S2', 'S2']);
    expect(data.rejected).toHaveLength(2);
  });

  it('treats a next link that loops back as incomplete instead of looping', async () => {
    servePages([envelope(4, [result('S1'), result('S2')], link(2)), envelope(4, [result('S3'), result('S4')], link(2))], 3);
    await expect(fetchUnit(unit, options())).rejects.toThrow(/repeats a link already followed/);
  });

  it('bounds the pages by the first page: more than ceil(count / n) is incomplete', async () => {
    servePages([envelope(2, [result('S1'), result('S2')], link(2)), envelope(2, [], null)], 3);
    await expect(fetchUnit(unit, options())).rejects.toThrow(IncompleteError);
  });
});

describe('fetchUnit failures', () => {
  it('401 is exit 3 without retry', async () => {
    nock(ORIGIN).get(PATH).query(true).reply(401, { detail: 'Invalid username/password.' });
    await expect(fetchUnit(unit, options())).rejects.toThrow(AuthError);
    expect(nock.isDone()).toBe(true);
  });

  it('500 after the retries is exit 4', async () => {
    nock(ORIGIN).get(PATH).query(true).times(3).reply(500);
    await expect(fetchUnit(unit, options())).rejects.toThrow(UnavailableError);
    expect(nock.isDone()).toBe(true);
  });

  it('a body that is not JSON is exit 5 once the retries are spent', async () => {
    nock(ORIGIN).get(PATH).query(true).times(3).reply(200, '<html>proxy error</html>');
    await expect(fetchUnit(unit, options())).rejects.toThrow(ContractError);
  });

  it('an envelope without results is exit 5', async () => {
    nock(ORIGIN).get(PATH).query(true).times(3).reply(200, { count: 1, next: null, previous: null });
    await expect(fetchUnit(unit, options())).rejects.toThrow(/not a paginated envelope: results/);
  });

  it('an invalid record fails the unit naming metric, day, store, field and value', async () => {
    const bad = { ...result('S9'), values: [{ zone: 'Za', unique_users: -1 }] };
    nock(ORIGIN)
      .get(PATH)
      .query(true)
      .reply(200, envelope(2, [result('S1'), bad], null));
    await expect(fetchUnit(unit, options())).rejects.toThrow(
      'unique-users 2026-11-20: invalid record (store_code "S9" date 2026-11-20T00:00:00-02:00): values[0].unique_users -1 must be >= 0',
    );
  });

  it('--on-invalid skip sets the record aside and keeps the rest', async () => {
    const bad = { ...result('S9'), granularity: 'hourly' };
    nock(ORIGIN)
      .get(PATH)
      .query(true)
      .reply(200, envelope(2, [result('S1'), bad], null));
    const data = await fetchUnit(unit, options({ onInvalid: 'skip' }));
    expect(rowsWritten(data)).toHaveLength(2);
    expect(data.rejected).toEqual([expect.objectContaining({ field: 'granularity', value: 'hourly', record: bad })]);
  });
});
