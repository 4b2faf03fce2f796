import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UsageError } from '../errors.js';
import { Dataset, parseInstant, type QueryRefs } from './data.js';
import { hits, parseFaults } from './faults.js';
import { parsePublishing, PublishingRules } from './publishing.js';
import { signHs256 } from './jwt.js';
import {
  DEFAULT_PAGE_SIZE,
  DEFAULT_SANDBOX,
  MAX_PAGE_SIZE,
  METRIC_NAMES,
  type MetricName,
  type RecordedRequest,
  type ResultWindow,
  type Sandbox,
  type SandboxFaults,
  type SandboxOptions,
  type SandboxPublishing,
} from './types.js';

const METRIC_PATH = /^\/api\/bi\/area-metrics\/(unique-users|avg-screen-time|traffic)\/?$/;
const TOKEN_PATH = /^\/oauth2\/token\/?$/;
const MAX_BODY_BYTES = 64 * 1024;
const PAGE_CACHE_CHARS = 64 * 1024 * 1024;
const TOKEN_AUDIENCE = 'area-metrics';
const JSON_TYPE = 'application/json';

/**
 * Serialised `results` arrays of recently served pages, bounded by their total length, so that a benchmark or a
 * client re-reading the same pages does not pay generation and serialisation again.
 */
class PageCache {
  private readonly entries = new Map<string, string>();
  private totalChars = 0;

  constructor(private readonly limitChars: number) {}

  get(key: string, build: () => string): string {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const value = build();
    if (value.length <= this.limitChars / 4) {
      this.entries.set(key, value);
      this.totalChars += value.length;
      for (const [oldKey, oldValue] of this.entries) {
        if (this.totalChars <= this.limitChars) break;
        this.entries.delete(oldKey);
        this.totalChars -= oldValue.length;
      }
    }
    return value;
  }
}

/** Raised while handling a request to answer with a given status and JSON body. */
class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers?: Record<string, string>;
}

interface Limits {
  readonly label: string;
  readonly min: number;
  readonly max: number;
}

function checkInteger(value: number, limits: Limits): number {
  if (!Number.isInteger(value) || value < limits.min || value > limits.max) {
    throw new UsageError(`sandbox ${limits.label} must be an integer in ${limits.min}..${limits.max} (got ${value})`);
  }
  return value;
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function safeEqual(actual: string, expected: string): boolean {
  const a = Buffer.from(actual, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `Authorization: Basic ...` → [user, password], or undefined when absent or malformed. */
function parseBasic(header: string | undefined): [string, string] | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** RFC 6749 2.3.1 form-encodes client id and secret before Basic encoding; undo it where it was done. */
function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function positiveInteger(text: string): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 ? value : undefined;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpAnswer(413, { detail: 'Request body too large.' }));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? DEFAULT_SANDBOX.host;
  const port = checkInteger(options.port ?? DEFAULT_SANDBOX.port, { label: 'port', min: 0, max: 65_535 });
  const dataset = new Dataset({
    stores: checkInteger(options.stores ?? DEFAULT_SANDBOX.stores, { label: 'stores', min: 1, max: 1_000_000 }),
    zones: checkInteger(options.zones ?? DEFAULT_SANDBOX.zones, { label: 'zones', min: 1, max: 1000 }),
    days: checkInteger(options.days ?? DEFAULT_SANDBOX.days, { label: 'days', min: 1, max: 3660 }),
    seed: checkInteger(options.seed ?? DEFAULT_SANDBOX.seed, { label: 'seed', min: 0, max: 2 ** 31 - 1 }),
  });
  const clientId = options.clientId ?? DEFAULT_SANDBOX.clientId;
  const clientSecret = options.clientSecret ?? DEFAULT_SANDBOX.clientSecret;
  if (clientId === '' || clientId.includes(':')) throw new UsageError('sandbox client id must be non-empty without ":"');
  if (clientSecret === '') throw new UsageError('sandbox client secret must not be empty');
  const tokenTtlSeconds = checkInteger(options.tokenTtlSeconds ?? DEFAULT_SANDBOX.tokenTtlSeconds, {
    label: 'token TTL',
    min: 1,
    max: 31_536_000,
  });
  const tokenSigningKey = options.tokenSigningKey ?? randomBytes(32).toString('hex');
  const now = options.now ?? (() => new Date());

  let faults: SandboxFaults = parseFaults(options.faults ?? {}, 'options');
  let publishing = new PublishingRules(parsePublishing(options.publishing ?? {}, 'options'));
  // Bumped on every change of the publishing rules, so cached queries and pages of the old rules are not served.
  let publishingGeneration = 0;
  let metricOrdinal = 0;
  let tokenOrdinal = 0;
  let tokenCalls = 0;
  const requests: RecordedRequest[] = [];
  const pendingTimers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  let baseUrl = '';
  const pageCache = new PageCache(PAGE_CACHE_CHARS);

  const delay = (milliseconds: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        pendingTimers.delete(timer);
        resolve();
      }, milliseconds);
      pendingTimers.add(timer);
    });

  const instantOf = (storeIndex: number, localDay: number): number =>
    Dataset.instantOf(localDay, dataset.store(storeIndex).offsetMinutes);
  /** The query's results that the vendor has published. */
  const published = (refs: QueryRefs): QueryRefs =>
    publishing.hidesAny
      ? dataset.filter(refs, (storeIndex, localDay) => !publishing.isHidden(dataset.storeCode(storeIndex), instantOf(storeIndex, localDay)), `${refs.key}|p${publishingGeneration}`)
      : refs;
  const revisionOf = (storeIndex: number, localDay: number): number =>
    publishing.revision(dataset.storeCode(storeIndex), instantOf(storeIndex, localDay));

  const send = (
    response: ServerResponse,
    record: RecordedRequest,
    status: number,
    body: string,
    headers: Record<string, string> = {},
  ): void => {
    record.status = status;
    options.onRequest?.(record);
    if (response.destroyed) return;
    response.writeHead(status, {
      'Content-Type': `${JSON_TYPE}; charset=utf-8`,
      'Content-Length': String(Buffer.byteLength(body)),
      ...headers,
    });
    response.end(body);
  };

  const window = (gte: string, lte: string): { fromMs: number; toMs: number } => {
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
  };

  const handleMetric = async (
    metric: MetricName,
    request: IncomingMessage,
    url: URL,
    record: RecordedRequest,
  ): Promise<Reply> => {
    if (request.method !== 'GET') {
      throw new HttpAnswer(405, { detail: `Method "${request.method}" not allowed.` }, { Allow: 'GET' });
    }
    metricOrdinal += 1;
    const ordinal = metricOrdinal;
    const active = faults;
    if (active.latencyMs) await delay(active.latencyMs);
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
    if (!credentials) {
      throw new HttpAnswer(
        401,
        { detail: 'Authentication credentials were not provided.' },
        { 'WWW-Authenticate': 'Basic realm="area-metrics"' },
      );
    }
    if (!safeEqual(credentials[0], clientId) || !safeEqual(credentials[1], clientSecret)) {
      throw new HttpAnswer(
        401,
        { detail: 'Invalid username/password.' },
        { 'WWW-Authenticate': 'Basic realm="area-metrics"' },
      );
    }
    record.authorized = true;

    const query = url.searchParams;
    const { fromMs, toMs } = window(query.get('datetime_gte') ?? '', query.get('datetime_lte') ?? '');
    const storeCode = query.get('store_code') ?? '';
    const pageSizeText = query.get('page_size');
    let pageSize = DEFAULT_PAGE_SIZE;
    if (pageSizeText !== null && pageSizeText !== '') {
      const requested = positiveInteger(pageSizeText);
      if (requested === undefined) {
        throw new HttpAnswer(400, {
          detail: 'page_size: A positive integer is required.',
          errors: { page_size: ['A positive integer is required.'] },
        });
      }
      pageSize = Math.min(requested, MAX_PAGE_SIZE); // silently capped, as the vendor's paginator does
    }
    const pageText = query.get('page');
    const page = pageText === null || pageText === '' ? 1 : positiveInteger(pageText);
    if (page === undefined) throw new HttpAnswer(404, { detail: 'Invalid page.' });

    // An unknown store has no results (count 0), it is not an error.
    const storeIndex = storeCode === '' ? undefined : (dataset.storeIndexOf(storeCode) ?? -1);
    const refs =
      storeIndex === -1
        ? { key: 'none', count: 0, storeIndexes: new Int32Array(0), localDays: new Int32Array(0) }
        : published(dataset.query(metric, { fromMs, toMs }, storeIndex, now()));
    const lastPage = Math.max(1, Math.ceil(refs.count / pageSize));
    if (page > lastPage) throw new HttpAnswer(404, { detail: 'Invalid page.' });

    const start = (page - 1) * pageSize;
    const repeat = Boolean(active.repeatResult) && page > 1;
    const resultsJson = pageCache.get(`${refs.key}|${start}|${pageSize}|${repeat ? 1 : 0}|p${publishingGeneration}`, () => {
      const results = dataset.slice(metric, refs, start, start + pageSize, revisionOf);
      if (repeat && results.length > 0) {
        // Unstable ordering: this page starts with the previous page's last result instead of its own first one.
        const storeIndex = refs.storeIndexes[start - 1]!;
        const localDay = refs.localDays[start - 1]!;
        results[0] = dataset.result(metric, storeIndex, localDay, revisionOf(storeIndex, localDay));
      }
      return JSON.stringify(results);
    });
    const origin = active.foreignNextOrigin ?? `http://${request.headers.host ?? new URL(baseUrl).host}`;
    const link = (target: number): string => {
      const params = new URLSearchParams(url.search);
      params.set('page_size', String(pageSize));
      params.set('page', String(target));
      return `${origin}${url.pathname}?${params.toString()}`;
    };
    // Same key order as JSON.stringify({count, next, previous, results}); the results part is cached.
    const next = JSON.stringify(page < lastPage ? link(page + 1) : null);
    const previous = JSON.stringify(page > 1 ? link(page - 1) : null);
    let body = `{"count":${refs.count},"next":${next},"previous":${previous},"results":${resultsJson}}`;
    if (hits(active.truncateNth, ordinal)) body = body.slice(0, Math.max(1, Math.floor(body.length / 2)));
    return { status: 200, body };
  };

  const handleToken = async (
    request: IncomingMessage,
    record: RecordedRequest,
  ): Promise<Reply> => {
    const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
    if (request.method !== 'POST') {
      throw new HttpAnswer(405, { error: 'invalid_request', error_description: 'use POST' }, { Allow: 'POST' });
    }
    tokenCalls += 1;
    tokenOrdinal += 1;
    const ordinal = tokenOrdinal;
    const active = faults;
    const text = await readBody(request);
    if (active.tokenLatencyMs) await delay(active.tokenLatencyMs);
    if (hits(active.tokenFailNth, ordinal)) {
      const status = active.tokenFailNth!.status;
      throw new HttpAnswer(status, {
        error: status >= 500 ? 'server_error' : 'invalid_request',
        error_description: `Injected failure (sandbox tokenFailNth, request ${ordinal}).`,
      });
    }
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/x-www-form-urlencoded') {
      throw new HttpAnswer(
        400,
        { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded.' },
        noStore,
      );
    }
    const form = new URLSearchParams(text);
    const basic = parseBasic(request.headers.authorization);
    // Basic credentials count as sent raw (RFC 7617, what area-metrics and most clients do) or form-encoded first
    // (RFC 6749 2.3.1): a secret with '+' or '%' must work either way.
    const candidates: [string, string][] = basic
      ? [basic, [formDecode(basic[0]), formDecode(basic[1])]]
      : form.has('client_id') && form.has('client_secret')
        ? [[form.get('client_id')!, form.get('client_secret')!]]
        : [];
    const challenge = { 'WWW-Authenticate': 'Basic realm="area-metrics"', ...noStore };
    if (candidates.length === 0) {
      throw new HttpAnswer(
        401,
        { error: 'invalid_client', error_description: 'Client authentication is required.' },
        challenge,
      );
    }
    const matches = ([id, secret]: [string, string]): boolean => safeEqual(id, clientId) && safeEqual(secret, clientSecret);
    if (!candidates.some(matches)) {
      throw new HttpAnswer(401, { error: 'invalid_client', error_description: 'Client authentication failed.' }, challenge);
    }
    record.authorized = true;
    const grantType = form.get('grant_type');
    if (grantType === null || grantType === '') {
      throw new HttpAnswer(400, { error: 'invalid_request', error_description: 'grant_type is required.' }, noStore);
    }
    if (grantType !== 'client_credentials') {
      throw new HttpAnswer(
        400,
        { error: 'unsupported_grant_type', error_description: 'Only client_credentials is supported.' },
        noStore,
      );
    }
    const scope = form.get('scope') ?? '';
    const issuedAt = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: baseUrl,
      sub: clientId,
      aud: TOKEN_AUDIENCE,
      iat: issuedAt,
      exp: issuedAt + tokenTtlSeconds,
      jti: randomUUID(),
    };
    if (scope !== '') claims.scope = scope;
    const answer: Record<string, unknown> = {
      access_token: signHs256(claims, tokenSigningKey),
      expires_in: tokenTtlSeconds,
      token_type: 'Bearer',
    };
    if (scope !== '') answer.scope = scope;
    return { status: 200, body: JSON.stringify(answer), headers: noStore };
  };

  const handleAdmin = async (
    request: IncomingMessage,
    url: URL,
    record: RecordedRequest,
  ): Promise<Reply> => {
    if (!isLoopback(request.socket.remoteAddress)) {
      throw new HttpAnswer(403, { detail: 'The sandbox admin endpoints answer loopback clients only.' });
    }
    record.authorized = true;
    if (url.pathname === '/_sandbox/faults' && request.method === 'POST') {
      const text = await readBody(request);
      let input: unknown;
      try {
        input = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        throw new HttpAnswer(400, { detail: 'The body must be a JSON object of SandboxFaults.' });
      }
      try {
        sandbox.setFaults(input as SandboxFaults);
      } catch (error) {
        throw new HttpAnswer(400, { detail: error instanceof Error ? error.message : String(error) });
      }
      return { status: 200, body: JSON.stringify({ faults }) };
    }
    if (url.pathname === '/_sandbox/faults' && request.method === 'GET') {
      return { status: 200, body: JSON.stringify({ faults }) };
    }
    if (url.pathname === '/_sandbox/publishing' && request.method === 'POST') {
      const text = await readBody(request);
      let input: unknown;
      try {
        input = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        throw new HttpAnswer(400, { detail: 'The body must be a JSON object of publishing rules.' });
      }
      try {
        sandbox.setPublishing(input as SandboxPublishing);
      } catch (error) {
        throw new HttpAnswer(400, { detail: error instanceof Error ? error.message : String(error) });
      }
      return { status: 200, body: JSON.stringify({ publishing: sandbox.publishing() }) };
    }
    if (url.pathname === '/_sandbox/publishing' && request.method === 'GET') {
      return { status: 200, body: JSON.stringify({ publishing: sandbox.publishing() }) };
    }
    if (url.pathname === '/_sandbox/requests' && request.method === 'GET') {
      // `?path_prefix=/oauth2` keeps the answer small after a long benchmark.
      const prefix = url.searchParams.get('path_prefix') ?? '';
      const selected = prefix === '' ? requests : requests.filter((entry) => entry.path.startsWith(prefix));
      return { status: 200, body: JSON.stringify({ requests: selected }) };
    }
    throw new HttpAnswer(404, { detail: 'Not found.' });
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://sandbox.invalid');
    const record: RecordedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: 0,
      authorized: false,
    };
    requests.push(record);
    const metricMatch = METRIC_PATH.exec(url.pathname);
    const handling = metricMatch
      ? handleMetric(metricMatch[1] as MetricName, request, url, record)
      : TOKEN_PATH.test(url.pathname)
        ? handleToken(request, record)
        : url.pathname.startsWith('/_sandbox/')
          ? handleAdmin(request, url, record)
          : Promise.reject(new HttpAnswer(404, { detail: 'Not found.' }));
    handling.then(
      (answer) => send(response, record, answer.status, answer.body, answer.headers),
      (error: unknown) => {
        if (error instanceof HttpAnswer) {
          send(response, record, error.status, JSON.stringify(error.body), error.headers);
        } else {
          // A bug in the sandbox must not take the server down; the client sees a 500 like from any server.
          send(response, record, 500, JSON.stringify({ detail: 'Internal sandbox error.' }));
        }
      },
    );
  });
  // Many clients keep connections alive; 200 concurrent requests must not hit a backlog limit.
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen({ host, port, backlog: 1024 }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' || host.includes(':') ? `[${address.address}]` : host;
  baseUrl = `http://${urlHost}:${address.port}`;

  let closing: Promise<void> | undefined;
  const sandbox: Sandbox = {
    url: baseUrl,
    clientId,
    clientSecret,
    tokenSigningKey,
    requests,
    tokenRequests: () => tokenCalls,
    faults: () => structuredClone(faults),
    setFaults(next: SandboxFaults): void {
      faults = parseFaults(next, 'setFaults');
      metricOrdinal = 0;
      tokenOrdinal = 0;
    },
    publishing: () => structuredClone(publishing.rules),
    setPublishing(next: SandboxPublishing): void {
      publishing = new PublishingRules(parsePublishing(next, 'setPublishing'));
      publishingGeneration += 1;
    },
    results(metric: MetricName, resultWindow: ResultWindow): unknown[] {
      if (!METRIC_NAMES.includes(metric)) throw new UsageError(`unknown metric ${String(metric)}`);
      const fromMs = parseInstant(resultWindow.gte);
      const toMs = parseInstant(resultWindow.lte);
      if (fromMs === undefined || toMs === undefined) {
        throw new UsageError(`invalid window ${resultWindow.gte} .. ${resultWindow.lte}: ISO date-times with Z or offset`);
      }
      const storeIndex =
        resultWindow.storeCode === undefined ? undefined : dataset.storeIndexOf(resultWindow.storeCode);
      if (resultWindow.storeCode !== undefined && storeIndex === undefined) return [];
      const refs = published(dataset.query(metric, { fromMs, toMs }, storeIndex, now()));
      return dataset.slice(metric, refs, 0, refs.count, revisionOf);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of pendingTimers) clearTimeout(timer);
        pendingTimers.clear();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
  return sandbox;
}
