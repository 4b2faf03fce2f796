import type { IncomingMessage } from 'node:http';
import type { Dataset } from './data.js';
import { HttpAnswer, isLoopback, type Reply } from './http.js';
import type { PageCache } from './page-cache.js';
import type { SandboxState } from './state.js';
import type { RecordedRequest } from './types.js';

/** The settings a running sandbox was started with. */
export interface SandboxSettings {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly tokenTtlSeconds: number;
  readonly tokenSigningKey: string;
}

/** What every handler works with. */
export interface SandboxContext {
  readonly settings: SandboxSettings;
  readonly dataset: Dataset;
  readonly state: SandboxState;
  readonly pageCache: PageCache;
  readonly now: () => Date;
  /** `http://host:port`, known once the server listens. */
  readonly baseUrl: () => string;
}

/** One request as a handler sees it. */
export interface Call {
  readonly request: IncomingMessage;
  readonly url: URL;
  /** The route's path pattern matched against the path, for its groups. */
  readonly match: RegExpExecArray;
  /** The request's entry in the request log; a handler marks it authorized. */
  readonly record: RecordedRequest;
}

export type Handler = (call: Call, context: SandboxContext) => Reply | Promise<Reply>;

export type Method = 'GET' | 'POST';

export interface Route {
  readonly method: Method;
  readonly path: RegExp;
  readonly handle: Handler;
  /** The 405 body for another method on this path, in the endpoint's own error shape. */
  readonly wrongMethod: (method: string) => unknown;
}

/** Paths only loopback clients may reach, whatever follows (an unknown one included). */
const LOOPBACK_ONLY_PREFIX = '/_sandbox/';

/**
 * The route for a request: 403 for an admin path from afar (a loopback client passes the admin paths' access check,
 * noted in its record), 404 for an unknown path, 405 for another method.
 */
export function findRoute(
  routes: readonly Route[],
  request: IncomingMessage,
  path: string,
  record: RecordedRequest,
): { route: Route; match: RegExpExecArray } {
  if (path.startsWith(LOOPBACK_ONLY_PREFIX)) {
    if (!isLoopback(request.socket.remoteAddress)) {
      throw new HttpAnswer(403, { detail: 'The sandbox admin endpoints answer loopback clients only.' });
    }
    record.authorized = true;
  }
  const method = request.method ?? 'GET';
  let allowed: Route[] = [];
  for (const route of routes) {
    const match = route.path.exec(path);
    if (!match) continue;
    if (route.method === method) return { route, match };
    allowed = [...allowed, route];
  }
  const first = allowed[0];
  if (!first) throw new HttpAnswer(404, { detail: 'Not found.' });
  throw new HttpAnswer(405, first.wrongMethod(method), { Allow: allowed.map((route) => route.method).join(', ') });
}
