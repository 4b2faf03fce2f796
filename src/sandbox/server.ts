import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../errors.js';
import { adminRoutes } from './admin-routes.js';
import { Dataset, parseInstant } from './data.js';
import { HttpAnswer, type Reply } from './http.js';
import { checkInteger, SANDBOX_LIMITS } from './limits.js';
import { metricRoute } from './metric-route.js';
import { PageCache } from './page-cache.js';
import { OwnAddress } from './own-address.js';
import { recordOf, REQUEST_LOG_CAPACITY, RequestLog } from './request-log.js';
import { findRoute, type Route, type SandboxContext, type SandboxSettings } from './routing.js';
import { servedResults, serveQuery } from './serving.js';
import { SandboxState } from './state.js';
import { tokenRoute } from './token-route.js';
import {
  DEFAULT_SANDBOX,
  type ResultWindow,
  type Sandbox,
  type SandboxFaults,
  type SandboxOptions,
  type SandboxPublishing,
} from './types.js';

const PAGE_CACHE_CHARS = 64 * 1024 * 1024;
const JSON_TYPE = 'application/json';

const detailWrongMethod = (method: string): unknown => ({ detail: `Method "${method}" not allowed.` });

/** Every endpoint: method, path, handler. Paths outside the table are 404; another method on a path in it, 405. */
const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    // Any name: the metric route answers 404 for a metric the data set does not hold.
    path: /^\/api\/bi\/area-metrics\/([^/]+)\/?$/,
    handle: metricRoute,
    wrongMethod: detailWrongMethod,
  },
  {
    method: 'POST',
    path: /^\/oauth2\/token\/?$/,
    handle: tokenRoute,
    wrongMethod: () => ({ error: 'invalid_request', error_description: 'use POST' }),
  },
  { method: 'POST', path: /^\/_sandbox\/faults$/, handle: adminRoutes.setFaults, wrongMethod: detailWrongMethod },
  { method: 'GET', path: /^\/_sandbox\/faults$/, handle: adminRoutes.showFaults, wrongMethod: detailWrongMethod },
  { method: 'POST', path: /^\/_sandbox\/publishing$/, handle: adminRoutes.setPublishing, wrongMethod: detailWrongMethod },
  { method: 'GET', path: /^\/_sandbox\/publishing$/, handle: adminRoutes.showPublishing, wrongMethod: detailWrongMethod },
  { method: 'GET', path: /^\/_sandbox\/requests$/, handle: adminRoutes.requests, wrongMethod: detailWrongMethod },
];

/** The options with their defaults, checked against the limits table. */
function settingsOf(
  options: SandboxOptions,
): SandboxSettings & { host: string; port: number; dataset: Dataset; requestLogCapacity: number } {
  const clientId = options.clientId ?? DEFAULT_SANDBOX.clientId;
  const clientSecret = options.clientSecret ?? DEFAULT_SANDBOX.clientSecret;
  if (clientId === '' || clientId.includes(':')) throw new UsageError('sandbox client id must be non-empty without ":"');
  if (clientSecret === '') throw new UsageError('sandbox client secret must not be empty');
  return {
    host: options.host ?? DEFAULT_SANDBOX.host,
    port: checkInteger(options.port ?? DEFAULT_SANDBOX.port, SANDBOX_LIMITS.port),
    dataset: new Dataset({
      stores: checkInteger(options.stores ?? DEFAULT_SANDBOX.stores, SANDBOX_LIMITS.stores),
      zones: checkInteger(options.zones ?? DEFAULT_SANDBOX.zones, SANDBOX_LIMITS.zones),
      days: checkInteger(options.days ?? DEFAULT_SANDBOX.days, SANDBOX_LIMITS.days),
      seed: checkInteger(options.seed ?? DEFAULT_SANDBOX.seed, SANDBOX_LIMITS.seed),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    }),
    clientId,
    clientSecret,
    tokenTtlSeconds: checkInteger(options.tokenTtlSeconds ?? DEFAULT_SANDBOX.tokenTtlSeconds, SANDBOX_LIMITS.tokenTtlSeconds),
    tokenSigningKey: options.tokenSigningKey ?? randomBytes(32).toString('hex'),
    requestLogCapacity: checkInteger(options.requestLogCapacity ?? REQUEST_LOG_CAPACITY, SANDBOX_LIMITS.requestLogCapacity),
  };
}

function send(response: ServerResponse, reply: Reply): void {
  if (response.destroyed) return;
  response.writeHead(reply.status, {
    'Content-Type': `${JSON_TYPE}; charset=utf-8`,
    'Content-Length': String(Buffer.byteLength(reply.body)),
    ...reply.headers,
  });
  response.end(reply.body);
}

function replyOf(error: unknown): Reply {
  if (error instanceof HttpAnswer) return { status: error.status, body: JSON.stringify(error.body), headers: error.headers };
  // A bug in the sandbox must not take the server down; the client sees a 500 like from any server.
  return { status: 500, body: JSON.stringify({ detail: 'Internal sandbox error.' }) };
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const { host, port, dataset, requestLogCapacity, ...settings } = settingsOf(options);
  const state = new SandboxState(
    options.faults ?? {},
    options.publishing ?? {},
    options.serveInProgress ?? false,
    new RequestLog(requestLogCapacity),
  );
  const address = new OwnAddress();
  const context: SandboxContext = {
    settings,
    dataset,
    state,
    pageCache: new PageCache(PAGE_CACHE_CHARS),
    now: options.now ?? (() => new Date()),
    address,
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://sandbox.invalid');
    const record = recordOf(request.method, url);
    const routing = findRoute(ROUTES, request, url.pathname, record, address);
    // Kept from its arrival, so a request still waiting (injected latency) is seen with status 0.
    if (routing.kind === 'unrouted') state.requests.countUnrouted();
    else state.requests.keep(record);
    const handling =
      routing.kind === 'route'
        ? (async (): Promise<Reply> => routing.route.handle({ request, url, match: routing.match, record }, context))()
        : Promise.reject(routing.answer);
    void handling.catch(replyOf).then((reply) => {
      record.status = reply.status;
      options.onRequest?.(record);
      send(response, reply);
    });
  });
  // Many clients keep connections alive; 200 concurrent requests must not hit a backlog limit.
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    state.sockets.add(socket);
    socket.on('close', () => state.sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen({ host, port, backlog: 1024 }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  address.settle(host, server.address() as AddressInfo);

  let closing: Promise<void> | undefined;
  return {
    url: address.baseUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    tokenSigningKey: settings.tokenSigningKey,
    get requests() {
      return state.requests.entries();
    },
    requestCounts: () => state.requests.counts(),
    tokenRequests: () => state.tokenCalls,
    faults: () => structuredClone(state.faults),
    setFaults: (next: SandboxFaults) => state.setFaults(next, 'setFaults'),
    publishing: () => structuredClone(state.publishing.rules),
    setPublishing: (next: SandboxPublishing) => state.setPublishing(next, 'setPublishing'),
    results(metric: string, resultWindow: ResultWindow): unknown[] {
      if (dataset.metric(metric) === undefined) throw new UsageError(`unknown metric ${metric}`);
      const fromMs = parseInstant(resultWindow.gte);
      const toMs = parseInstant(resultWindow.lte);
      if (fromMs === undefined || toMs === undefined) {
        throw new UsageError(`invalid window ${resultWindow.gte} .. ${resultWindow.lte}: ISO date-times with Z or offset`);
      }
      const storeIndex = resultWindow.storeCode === undefined ? undefined : dataset.storeIndexOf(resultWindow.storeCode);
      if (resultWindow.storeCode !== undefined && storeIndex === undefined) return [];
      const now = context.now();
      const served = serveQuery(dataset, dataset.query(metric, { fromMs, toMs }, storeIndex, now), state, now.getTime());
      return servedResults(dataset, metric, served, 0, served.refs.count);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of state.pendingTimers) clearTimeout(timer);
        state.pendingTimers.clear();
        server.close(() => resolve());
        for (const socket of state.sockets) socket.destroy();
      });
      return closing;
    },
  };
}
