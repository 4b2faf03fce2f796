import type { Logger } from 'pino';
import type { Redactor } from '../../redact.js';
import type { AttestationGate, AttestationResult } from '../attestation/gate.js';
import type { RefusalCause } from '../attestation/verifier.js';
import { requestIdOf, type Answer, type TokenAnswers } from './answers.js';
import type { HitSummary } from '../log/hit-summary.js';
import type { LiveConfig } from '../config/live-config.js';
import type { Admission, RequestLimits } from './limits.js';
import { clientAddress, cutForLog, type ErrorSummary } from '../log/log-bounds.js';
import type { BrokerMetrics } from './metrics.js';
import { BrokerProblem, type ProblemDetails } from '../problem.js';
import type { BrokerToken, CacheOutcome } from '../token/token-broker.js';

export const TOKEN_PATH = '/api/gatekeeper-token';

/** A request URL without its query string (the query can be long, and only the path identifies the resource). */
export function pathOf(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

/** Whether a request is for the token resource (with or without a trailing slash, whatever the query). */
export function isTokenPath(url: string): boolean {
  const path = pathOf(url);
  return path === TOKEN_PATH || path === `${TOKEN_PATH}/`;
}

/** Whether the broker is stopping: /readyz then answers 503, and every answer closes its connection. */
export class DrainState {
  draining = false;

  start(): void {
    this.draining = true;
  }
}

/** A token request as the contract sees it, whichever path took it. */
export interface TokenRequestHead {
  readonly requestId: string;
  /** The Origin header, if any: CORS is granted only to a web application's own origin. */
  readonly origin: string | undefined;
  /** The client's address: the peer, or the first X-Forwarded-For hop behind a trusted proxy. */
  readonly client: string;
  /** The attestation header's value, when attestation is on and the request has one. */
  readonly attestation: string | undefined;
}

/** The fields of one `request completed` line. */
export interface CompletedRequest {
  readonly reqId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** Undefined for a request fastify refused before timing it (a URL it cannot decode). */
  readonly responseTimeMs: number | undefined;
  readonly application: string | undefined;
  readonly cache: CacheOutcome | undefined;
  readonly authLatencyMs: number | undefined;
  readonly problem: string | undefined;
  readonly reason: string | undefined;
  /** The attestation's verdict, when it was checked. */
  readonly attestation: AttestationResult | undefined;
  /** Why the attestation was refused (or would be, in report mode): each cause is logged once per interval. */
  readonly refusal?: RefusalCause;
  /** The client, on error answers only. */
  readonly client: string | undefined;
  /** /healthz, /readyz and /metrics, whose line is debug. */
  readonly probe: boolean;
}

export interface TokenRequestParts {
  readonly live: LiveConfig;
  readonly answers: TokenAnswers;
  readonly limits: RequestLimits;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  readonly drain: DrainState;
  readonly hits: HitSummary;
  readonly errors: ErrorSummary;
  /** Absent when attestation is off. */
  readonly attestation?: AttestationGate;
}

/**
 * What every token request goes through, whichever path answers it (the fast path for a fresh cache hit, or the
 * fastify route): the request id, the client's address, the limits (one place in flight and one point of the
 * client's rate, taken once), the answer with its CORS and drain headers, the metrics, and the one `request
 * completed` line with its hit and error accounting.
 */
export class TokenRequests {
  constructor(private readonly parts: TokenRequestParts) {}

  head(
    givenRequestId: string | string[] | undefined,
    origin: string | undefined,
    peer: string | undefined,
    forwardedFor: string | undefined,
    attestation?: string,
  ): TokenRequestHead {
    // One literal of one shape: this runs for every cached answer.
    return { requestId: requestIdOf(givenRequestId), origin, client: this.clientOf(peer, forwardedFor), attestation };
  }

  /** The attestation gate; undefined when attestation is off. */
  get attestation(): AttestationGate | undefined {
    return this.parts.attestation;
  }

  /** Masks every secret the broker ever held: what an answer or a line quotes of a request or an error passes it. */
  get redact(): Redactor {
    return this.parts.live.redact;
  }

  get trustProxy(): boolean {
    return this.parts.live.current.server.trustProxy;
  }

  clientOf(peer: string | undefined, forwardedFor: string | undefined): string {
    return clientAddress(peer, forwardedFor, this.trustProxy, this.parts.live.redact);
  }

  /**
   * Takes a place among the requests in flight and a point of the client's rate: undefined when both were had (pair
   * it with `leave()`), else the problem that answers the request (nothing to give back). At once when the rate is
   * counted in memory (a cached token is then answered in the request's own callback), a promise when in Redis. Never
   * rejects: a rate store that fails does not refuse anyone.
   */
  admit(client: string): Admission | Promise<Admission> {
    const limits = this.parts.limits;
    if (!limits.enter()) return limits.overloaded();
    const admission = limits.admit(client);
    if (!(admission instanceof Promise)) return this.settle(admission);
    return admission.then(
      (problem) => this.settle(problem),
      () => undefined,
    );
  }

  /** A refused request gives its place in flight back at once; an admitted one keeps it until `leave()`. */
  private settle(problem: Admission): Admission {
    if (problem !== undefined) this.parts.limits.leave();
    return problem;
  }

  leave(): void {
    this.parts.limits.leave();
  }

  /** A token's answer, counted in the metrics (with the attestation's verdict, when it was checked). */
  token(token: BrokerToken, head: TokenRequestHead, application: unknown, attestation?: AttestationResult): Answer {
    this.parts.metrics.tokenServed(token.cache);
    if (attestation !== undefined) this.parts.metrics.attestation(attestation);
    return this.parts.answers.token(token, {
      requestId: head.requestId,
      origin: head.origin,
      application,
      draining: this.parts.drain.draining,
    });
  }

  /** A token request's problem answer, counted in the metrics. */
  problem(problem: BrokerProblem, head: TokenRequestHead, application: unknown, attestation?: AttestationResult): Answer {
    this.parts.metrics.tokenFailed(problem.status);
    if (attestation !== undefined) this.parts.metrics.attestation(attestation);
    return this.answer(problem, head, application);
  }

  /** A problem answer with the same headers, not counted as a token request (an unknown path, a broken URL). */
  answer(problem: BrokerProblem | ProblemDetails, head: TokenRequestHead, application: unknown): Answer {
    const context = { requestId: head.requestId, origin: head.origin, application, draining: this.parts.drain.draining };
    return problem instanceof BrokerProblem
      ? this.parts.answers.problem(problem, context)
      : this.parts.answers.problemDetails(problem, context);
  }

  /** The 500 answer of a bug, logged boundedly (the fastify route's error handler does the same). */
  unexpected(error: unknown, head: TokenRequestHead): Answer {
    this.logUnexpected(error, head);
    return this.answer(new BrokerProblem('internal-error', 'the broker failed unexpectedly; see its logs'), head, undefined);
  }

  /**
   * A bug's error line: the first of each interval with its message and the top of its stack, the rest counted in the
   * `errors not logged one by one` line, so that a request that meets a bug, sent again and again, cannot flood the log.
   */
  logUnexpected(error: unknown, head: TokenRequestHead): void {
    if (!this.parts.errors.shouldLog('unexpected error')) return;
    this.parts.logger.error(
      { reqId: head.requestId, client: head.client, error: boundedError(error, this.parts.live.redact) },
      'unexpected error',
    );
  }

  /**
   * The request's line: debug for a probe and for a cache hit (counted in the periodic `cache hits` line instead: one
   * line per hit cost about 40% of the cached-token throughput), and for an error whose kind was already logged in
   * this interval (counted in the `errors not logged one by one` line); info for the rest.
   */
  completed(line: CompletedRequest): void {
    const logger = this.parts.logger;
    const attested = line.attestation === undefined || line.attestation === 'valid';
    if (!line.probe && attested && line.cache === 'hit' && line.status === 200 && line.application !== undefined) {
      // The common case: counted, and its line built only when debug lines are written at all.
      const application = cutForLog(line.application, this.parts.live.redact);
      this.parts.hits.record(application, line.responseTimeMs ?? 0);
      if (logger.isLevelEnabled('debug')) logger.debug(this.fieldsOf(line), 'request completed');
      return;
    }
    const fields = this.fieldsOf(line);
    // An attestation refusal is a kind of its own per cause: during a rollout the cause is what an operator needs.
    const cause = line.refusal === undefined ? '' : ` (${line.refusal})`;
    if (line.probe) {
      logger.debug(fields, 'request completed');
    } else if (!attested && fields.status < 400) {
      // A token served despite its attestation (report mode) is logged like an error: once per kind per interval.
      if (this.parts.errors.shouldLog(`attestation ${fields.attestation}${cause}`)) logger.info(fields, 'request completed');
      else logger.debug(fields, 'request completed');
    } else if (fields.status >= 400 && !this.parts.errors.shouldLog(`${fields.status} ${fields.problem ?? 'error'}${cause}`)) {
      logger.debug(fields, 'request completed');
    } else {
      logger.info(fields, 'request completed');
    }
  }

  /** The line's fields, cut to their bounds: one shape for every line (pino leaves out undefined fields). */
  private fieldsOf(line: CompletedRequest) {
    const { redact } = this.parts.live;
    return {
      reqId: line.reqId,
      method: line.method,
      path: cutForLog(line.path, redact),
      status: line.status,
      responseTimeMs: line.responseTimeMs,
      application: line.application === undefined ? undefined : cutForLog(line.application, redact),
      cache: line.cache,
      authLatencyMs: line.authLatencyMs,
      problem: line.problem,
      reason: line.reason === undefined ? undefined : cutForLog(line.reason, redact),
      attestation: line.attestation,
      refusal: line.refusal,
      client: line.client,
    };
  }

  /** The `cache hits` and `errors not logged one by one` lines of the interval just ended, when there was something. */
  logSummaries(): void {
    const hitSummary = this.parts.hits.take();
    if (hitSummary !== undefined) this.parts.logger.info(hitSummary, 'cache hits');
    const errorSummary = this.parts.errors.take();
    if (errorSummary !== undefined) this.parts.logger.info(errorSummary, 'errors not logged one by one');
  }
}

/** The longest stack written for an unexpected error: its top frames say where; the rest is the framework. */
const MAX_LOGGED_STACK_LENGTH = 1000;

/** The error's type, message and top of its stack, each masked before it is cut (see `cutForLog`). */
function boundedError(error: unknown, redact: Redactor): { readonly type: string; readonly message: string; readonly stack?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: cutForLog(String(error), redact) };
  const stack = error.stack === undefined ? {} : { stack: redact(error.stack).slice(0, MAX_LOGGED_STACK_LENGTH) };
  return { type: error.name, message: cutForLog(error.message, redact), ...stack };
}

/** Milliseconds since `startedAt` (performance.now()), to a tenth. */
export function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 10) / 10;
}
