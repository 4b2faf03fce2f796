import { randomUUID } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { allowedOrigin, corsHeaders } from './cors.js';
import { servedExpiresIn } from '../token/expiry.js';
import type { LiveConfig } from '../config/live-config.js';
import { PROBLEM_CONTENT_TYPE, RETRY_AFTER_SECONDS, type BrokerProblem, type ProblemDetails } from '../problem.js';
import type { BrokerToken } from '../token/token-broker.js';

/** A whole answer: status, headers (Content-Length included) and body; the server writes it as it is. */
export interface Answer {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
}

/** What an answer depends on besides its content. */
export interface AnswerContext {
  readonly requestId: string;
  /** The request's Origin header, if any: CORS is granted only to a web application's own origin. */
  readonly origin: string | undefined;
  /** The application asked for (CORS is per application); undefined when the request named none. */
  readonly application: unknown;
  /** While draining, every answer closes its connection so that clients reconnect elsewhere. */
  readonly draining: boolean;
}

// Request ids from a load balancer are reused when they look like ids; anything else is replaced (log injection).
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * The token answers and problem answers of the token resource, whichever path serves them (the fast path for a fresh
 * cache hit or the fastify route): one place decides the headers, CORS, `Connection: close` while draining, and the
 * body. `Cache-Control: no-store` keeps the token out of every cache, so the HTTP/1.0 `Pragma` is left out: each
 * header is work for the broker and for every client. The charset is the one fastify gives a JSON string body.
 */
export class TokenAnswers {
  /** A token's 200 body as bytes, built once per second of its `expires_in` (the only part that changes). */
  private readonly bodies = new Map<string, { readonly expiresIn: number | undefined; readonly bytes: Buffer }>();

  constructor(
    private readonly live: LiveConfig,
    private readonly now: () => number = Date.now,
  ) {}

  token(token: BrokerToken, context: AnswerContext): Answer {
    const body = this.body(token);
    // Every field in one literal (the body, and so its length, is known first); CORS is the rare addition.
    const headers: OutgoingHttpHeaders = {
      'x-request-id': context.requestId,
      'cache-control': 'no-store',
      'content-type': 'application/json; charset=utf-8',
      vary: 'Origin',
      'content-length': body.length,
    };
    this.finish(headers, context);
    return { status: 200, headers, body };
  }

  /** A problem+json answer; a 429 or 503 says when to come back. */
  problem(problem: BrokerProblem, context: AnswerContext): Answer {
    const retryAfter = problem.status === 503 || problem.status === 429 ? (problem.retryAfterSeconds ?? RETRY_AFTER_SECONDS) : undefined;
    return this.problemDetails(problem.toJSON(), context, retryAfter);
  }

  problemDetails(details: ProblemDetails, context: AnswerContext, retryAfterSeconds?: number): Answer {
    const body = Buffer.from(this.live.redact(JSON.stringify(details)));
    const headers: OutgoingHttpHeaders = {
      'x-request-id': context.requestId,
      'cache-control': 'no-store',
      'content-type': PROBLEM_CONTENT_TYPE,
      vary: 'Origin',
      'content-length': body.length,
    };
    if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
    this.finish(headers, context);
    return { status: details.status, headers, body };
  }

  private finish(headers: OutgoingHttpHeaders, context: AnswerContext): void {
    const origin = allowedOrigin(this.live.current, context.origin, context.application);
    if (origin !== undefined) Object.assign(headers, corsHeaders(origin, false));
    if (context.draining) headers.connection = 'close';
  }

  private body(token: BrokerToken): Buffer {
    const expiresIn = token.expiresAt === undefined ? undefined : servedExpiresIn(token.expiresAt, this.now());
    const cached = this.bodies.get(token.accessToken);
    if (cached !== undefined && cached.expiresIn === expiresIn) return cached.bytes;
    if (this.bodies.size >= 64) this.bodies.clear(); // a few tokens per application: refetched ones drop out here
    const start = `{"access_token":${JSON.stringify(token.accessToken)}`;
    const bytes = Buffer.from(expiresIn === undefined ? `${start}}` : `${start},"expires_in":${expiresIn}}`);
    this.bodies.set(token.accessToken, { expiresIn, bytes });
    return bytes;
  }
}
