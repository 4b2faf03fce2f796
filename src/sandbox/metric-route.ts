import { parseInstant } from './data.js';
import { hits } from './faults.js';
import { HttpAnswer, parseBasic, positiveInteger, safeEqual, type Reply } from './http.js';
import type { Call, SandboxContext } from './routing.js';
import { servedResults, serveQuery } from './serving.js';
import { throttleRequest } from './throttle.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './types.js';

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="area-metrics"' };

/** The required time window of a metric query, or 400 naming the first field that is missing or unparseable. */
function timeWindow(gte: string, lte: string): { fromMs: number; toMs: number } {
  const errors: Record<string, string[]> = {};
  const fromMs = gte === '' ? undefined : parseInstant(gte);
  const toMs = lte === '' ? undefined : parseInstant(lte);
  for (const [name, text, value] of [
    ['datetime_gte', gte, fromMs],
    ['datetime_lte', lte, toMs],
  ] as const) {
    if (text === '') errors[name] = ['This field is required.'];
    else if (value === undefined) {
      errors[name] = ['Enter a valid date/time: ISO 8601 with Z or an offset, e.g. 2026-11-20T00:00:00Z.'];
    }
  }
  if (fromMs === undefined || toMs === undefined) {
    const first = Object.entries(errors)[0]!;
    throw new HttpAnswer(400, { detail: `${first[0]}: ${first[1][0]}`, errors });
  }
  return { fromMs, toMs };
}

/** `page_size`: the default when absent, silently capped at the maximum (as the vendor's paginator does). */
function pageSizeOf(text: string | null): number {
  if (text === null || text === '') return DEFAULT_PAGE_SIZE;
  const requested = positiveInteger(text);
  if (requested === undefined) {
    throw new HttpAnswer(400, {
      detail: 'page_size: A positive integer is required.',
      errors: { page_size: ['A positive integer is required.'] },
    });
  }
  return Math.min(requested, MAX_PAGE_SIZE);
}

/** `GET /api/bi/area-metrics/{metric}/`: one page of a metric's results, with the active faults applied. */
export async function metricRoute({ request, url, match, record }: Call, context: SandboxContext): Promise<Reply> {
  const { state, dataset, settings } = context;
  const metric = match[1] ?? '';
  // A metric the data set does not hold is a path outside the API, as the router answers any other.
  if (dataset.metric(metric) === undefined) throw new HttpAnswer(404, { detail: 'Not found.' });
  state.metricOrdinal += 1;
  const ordinal = state.metricOrdinal;
  const active = state.faults;
  // Faults act before authentication, as a proxy or gateway in front of the API would.
  if (active.latencyMs) await state.delay(active.latencyMs);
  if (hits(active.failNth, ordinal)) {
    throw new HttpAnswer(active.failNth!.status, { detail: `Injected failure (sandbox failNth, request ${ordinal}).` });
  }
  if (hits(active.rateLimitNth, ordinal)) {
    const seconds = active.rateLimitNth!.retryAfterSeconds;
    throw new HttpAnswer(
      429,
      { detail: `Request was throttled. Expected available in ${seconds} seconds.` },
      { 'Retry-After': String(seconds) },
    );
  }
  const credentials = parseBasic(request.headers.authorization);
  if (!credentials) throw new HttpAnswer(401, { detail: 'Authentication credentials were not provided.' }, BASIC_CHALLENGE);
  if (!safeEqual(credentials[0], settings.clientId) || !safeEqual(credentials[1], settings.clientSecret)) {
    throw new HttpAnswer(401, { detail: 'Invalid username/password.' }, BASIC_CHALLENGE);
  }
  record.authorized = true;
  const limitHeaders = active.rateLimit ? throttleRequest(state.throttle, active.rateLimit, performance.now()) : undefined;

  const query = url.searchParams;
  const window = timeWindow(query.get('datetime_gte') ?? '', query.get('datetime_lte') ?? '');
  const storeCode = query.get('store_code') ?? '';
  const pageSize = pageSizeOf(query.get('page_size'));
  const pageText = query.get('page');
  const page = pageText === null || pageText === '' ? 1 : positiveInteger(pageText);
  if (page === undefined) throw new HttpAnswer(404, { detail: 'Invalid page.' });

  // An unknown store has no results (count 0), it is not an error.
  const storeIndex = storeCode === '' ? undefined : (dataset.storeIndexOf(storeCode) ?? -1);
  const now = context.now();
  const served = storeIndex === -1 ? undefined : serveQuery(dataset, dataset.query(metric, window, storeIndex, now), state, now.getTime());
  const count = served?.refs.count ?? 0;
  const lastPage = Math.max(1, Math.ceil(count / pageSize));
  if (page > lastPage) throw new HttpAnswer(404, { detail: 'Invalid page.' });

  const start = (page - 1) * pageSize;
  const repeat = Boolean(active.repeatResult) && page > 1;
  const resultsJson =
    served === undefined
      ? '[]'
      : context.pageCache.get(`${served.key}|${start}|${pageSize}|${repeat ? 1 : 0}`, () => {
          const results = servedResults(dataset, metric, served, start, start + pageSize);
          if (repeat && results.length > 0) {
            // Unstable ordering: this page starts with the previous page's last result instead of its own first one.
            results[0] = servedResults(dataset, metric, served, start - 1, start)[0]!;
          }
          return JSON.stringify(results);
        });
  const origin = active.foreignNextOrigin ?? `http://${request.headers.host ?? new URL(context.address.baseUrl).host}`;
  const link = (target: number): string => {
    const params = new URLSearchParams(url.search);
    params.set('page_size', String(pageSize));
    params.set('page', String(target));
    return `${origin}${url.pathname}?${params.toString()}`;
  };
  // Same key order as JSON.stringify({count, next, previous, results}); the results part is cached.
  const next = JSON.stringify(page < lastPage ? link(page + 1) : null);
  const previous = JSON.stringify(page > 1 ? link(page - 1) : null);
  let body = `{"count":${count},"next":${next},"previous":${previous},"results":${resultsJson}}`;
  if (hits(active.truncateNth, ordinal)) body = body.slice(0, Math.max(1, Math.floor(body.length / 2)));
  return { status: 200, body, ...(limitHeaders ? { headers: limitHeaders } : {}) };
}
