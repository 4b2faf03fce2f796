import type { IncomingMessage } from 'node:http';
import type { Dataset } from './data.js';
import { HttpAnswer, type Reply } from './http.js';
import type { OwnAddress } from './own-address.js';
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
  /** Its base URL and the names it answers admin requests to, known once the server listens. */
  readonly address: OwnAddress;
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

/** Paths only the sandbox's own machine may reach, whatever follows (an unknown one included). */
const ADMIN_PREFIX = '/_sandbox/';

/** Where a request goes: a route, a refusal (kept in the request log), or nowhere (only counted). */
export type Routing =
  | { readonly kind: 'route'; readonly route: Route; readonly match: RegExpExecArray }
  | { readonly kind: 'refused' | 'unrouted'; readonly answer: HttpAnswer };

/**
 * The route for a request: 403 for an admin path the sandbox's address refuses (a request it admits passes the admin
 * paths' access check, noted in its record), 404 for an unknown path, 405 for another method.
 */
export function findRoute(
  routes: readonly Route[],
  request: IncomingMessage,
  path: string,
  record: RecordedRequest,
  address: OwnAddress,
): Routing {
  if (path.startsWith(ADMIN_PREFIX)) {
    const refusal = address.adminRefusal(request);
    if (refusal !== undefined) return { kind: 'refused', answer: new HttpAnswer(403, { detail: refusal }) };
    record.authorized = true;
  }
  const method = request.method ?? 'GET';
  const allowed: Route[] = [];
  for (const route of routes) {
    const match = route.path.exec(path);
    if (!match) continue;
    if (route.method === method) return { kind: 'route', route, match };
    allowed.push(route);
  }
  const first = allowed[0];
  if (!first) return { kind: 'unrouted', answer: new HttpAnswer(404, { detail: 'Not found.' }) };
  const answer = new HttpAnswer(405, first.wrongMethod(method), { Allow: allowed.map((route) => route.method).join(', ') });
  return { kind: 'unrouted', answer };
}
