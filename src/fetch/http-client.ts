import type { Dispatcher } from 'undici';
import { AuthError, ContractError, InterruptedError, UnavailableError } from '../errors.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { systemClock, type Clock } from './clock.js';
import { UNREACHABLE_HINT, type CallId } from './outage.js';
import { Pacer, type Ticket } from './pacer.js';
import { describeSeconds } from './wait-cap.js';
import { BodyTooLargeError, MalformedBodyError, describeRequest, fetchBuffered, type HttpRequest, type HttpResponse } from './exchange.js';
import { errorDetail, proxyStatusOf, networkReason } from './failure-words.js';

/** A request without an answer this long gets a progress line saying what it waits for. */
export const SLOW_ANSWER_MS = 10_000;

/** Statuses worth another attempt. 400, 401, 403 and 404 are final. */
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);

export interface RetryPolicy {
  /** Attempts after the first. */
  readonly retries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A server's Retry-After is honoured up to this; longer waits are cut to it so cron runs stay bounded. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

export interface HttpClientOptions {
  readonly dispatcher?: Dispatcher;
  readonly timeoutMs: number;
  readonly retry?: RetryPolicy;
  readonly logger?: Logger;
  /** Aborts every request and backoff wait (SIGINT/SIGTERM). */
  readonly signal?: AbortSignal;
  /** What backoffs wait on and Retry-After dates are read against; tests pass a virtual one. Default: the system's. */
  readonly clock?: Clock;
  /** The run's pacer, shared by every client of the run (its clock should be this client's). Default: one of its own. */
  readonly pacer?: Pacer;
  readonly random?: () => number;
  /** After this long without an answer a request says what it waits for (default SLOW_ANSWER_MS). */
  readonly slowAnswerMs?: number;
}

/** An HTTP date starts with the day's name (`Sun, 06 Nov 1994 08:49:37 GMT` and its two obsolete forms). */
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i;

/**
 * Retry-After as whole seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable, so the caller
 * falls back to its backoff. `-1` or `1.5` are not "retry now": Date.parse would read them as dates long past.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!HTTP_DATE.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  // Full jitter (AWS architecture blog): spreads a herd of retrying clients evenly over the window.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * Why an attempt failed, as the retry loop decides on it: `transient` is retried while attempts last, then becomes
 * an UnavailableError (exit 4); `malformed` likewise, then a ContractError (exit 5: the server is not sending the
 * API's JSON); `final` is thrown at once (401, 403, a proxy refusing our credentials); `refused` is an answer that
 * retrying will not change (400, 404, other statuses), reported like `transient`'s last attempt.
 */
type Failure =
  | {
      readonly kind: 'transient';
      readonly reason: string;
      readonly retryAfterMs?: number;
      /** A 429: the vendor is up and asks for less; otherwise a network error, timeout or 5xx, which the outage gate counts. */
      readonly throttled?: boolean;
      /** No answer within the timeout. */
      readonly timedOut?: boolean;
    }
  | { readonly kind: 'malformed'; readonly reason: string }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'final'; readonly error: Error };

type Retryable = Exclude<Failure, { kind: 'final' }>;

/** A failure whose wait is the pacer's hold for every request (a Retry-After), not the call's own backoff. */
function heldByPacer(failure: Retryable): boolean {
  return failure.kind === 'transient' && (failure.throttled === true || failure.retryAfterMs !== undefined);
}

type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: Failure };

/** An outcome, with the wait before the next attempt when it can be retried. */
type Judged<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly failure: Extract<Failure, { kind: 'final' }> }
  | { readonly ok: false; readonly failure: Retryable; readonly waitMs: number };

interface Exchanged<T> {
  readonly outcome: Outcome<T>;
  readonly headers?: Headers;
}

/** Sends one request and parses its answer: what the auth module needs, implemented by HttpClient and the broker's one-shot call. */
export interface Transport {
  send<T>(request: HttpRequest, parse: (response: HttpResponse) => T | Promise<T>): Promise<T>;
}

/**
 * HTTP with timeouts and retries, over the global `fetch` with an undici dispatcher (so nock can intercept it in
 * tests). It never puts credentials in a message: requests are described by method, origin and path only.
 */
export class HttpClient implements Transport {
  private readonly retry: RetryPolicy;
  private readonly logger: Logger;
  private readonly clock: Clock;
  /** The run's pacer: a pager tells it the pages a unit's first answer announces. */
  readonly pacer: Pacer;
  private readonly random: () => number;

  constructor(private readonly options: HttpClientOptions) {
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.pacer = options.pacer ?? new Pacer({ clock: this.clock, logger: this.logger });
    this.random = options.random ?? Math.random;
  }

  /**
   * Sends the request until it succeeds or retries run out. `parse` turns a 2xx body into T; throwing (or rejecting
   * with) MalformedBodyError from it makes the attempt count as transient: a proxy or a load balancer can cut a body
   * short, and the next attempt may get it whole. Every attempt waits for its turn at the run's pacer (and, while the
   * vendor fails, at its outage gate, which throws VendorDownError when the vendor is down).
   */
  async send<T>(request: HttpRequest, parse: (response: HttpResponse) => T | Promise<T>): Promise<T> {
    const what = describeRequest(request);
    const attempts = this.retry.retries + 1;
    const call = this.pacer.outage.join();
    let last: { failure: Retryable; waitMs: number } | undefined;
    let made = 0;
    try {
      for (let attempt = 0; attempt < attempts; attempt++) {
        if (last) {
          this.logger.warn(
            `${what}: ${last.failure.reason}; retry ${attempt}/${this.retry.retries} in ${(last.waitMs / 1000).toFixed(1)} s`,
          );
          // A Retry-After (a 429's, or a 5xx's) is the pacer's hold, for every request of the run.
          if (!heldByPacer(last.failure)) await this.unlessInterrupted(this.clock.sleep(last.waitMs, this.options.signal));
        }
        const ticket = await this.unlessInterrupted(this.pacer.acquire(call, this.options.signal));
        const counted = (): void => {
          made++;
          if (request.tally) request.tally.requests++;
        };
        let outcome: Judged<T>;
        try {
          outcome = await this.judged(call, ticket, attempt, this.exchange(request, parse, ticket));
        } catch (error) {
          // One the run's halt (or an interrupt) aborted before its answer is not a request sent.
          if (!this.options.signal?.aborted) counted();
          throw error;
        }
        counted();
        if (outcome.ok) return outcome.value;
        if (!('waitMs' in outcome)) throw outcome.failure.error;
        const { failure } = outcome;
        last = { failure, waitMs: outcome.waitMs };
        if (failure.kind === 'transient' && failure.throttled && request.tally) request.tally.throttled++;
        if (failure.kind === 'refused') break;
      }
    } finally {
      this.pacer.outage.leave(call);
    }
    const failure = (last as NonNullable<typeof last>).failure;
    const tries = `${made} attempt${made === 1 ? '' : 's'}`;
    if (failure.kind === 'malformed') {
      throw new ContractError(`${what}: ${failure.reason} (after ${tries}); the server is not sending the API's JSON`);
    }
    if (failure.kind === 'transient' && !failure.throttled) this.pacer.outage.gaveUp(call, `${request.label ?? what} failed ${tries}`);
    throw new UnavailableError(`${what}: ${failure.reason} (after ${tries}); ${UNREACHABLE_HINT}`);
  }

  /** How long to wait before the attempt after `attempt`: the server's Retry-After (capped), else the backoff. */
  private waitAfter(failure: Retryable, attempt: number): number {
    const retryAfterMs = failure.kind === 'transient' ? failure.retryAfterMs : undefined;
    return retryAfterMs !== undefined
      ? Math.min(retryAfterMs, this.retry.maxRetryAfterMs, this.pacer.waitCap.maxWaitMs)
      : backoffDelay(attempt, this.retry, this.random);
  }

  /** `waiting`, or the interrupt that aborted it (SIGINT/SIGTERM, or the run's halt). */
  private async unlessInterrupted<T>(waiting: Promise<T>): Promise<T> {
    try {
      return await waiting;
    } catch (error) {
      if (this.options.signal?.aborted) this.throwIfInterrupted();
      throw error;
    }
  }

  private throwIfInterrupted(): never {
    const reason: unknown = this.options.signal?.reason;
    if (reason instanceof InterruptedError) throw reason;
    throw reason instanceof Error ? reason : new InterruptedError('SIGINT');
  }

  /**
   * The outcome of attempt number `attempt` (from 0), with the wait before the next one, told to the outage gate
   * (which throws VendorDownError when it finds the vendor down), then to the pacer (a 429, then the answer), in that
   * order: the requests the pacer lets go at this answer must see the gate and the hold as they now are.
   */
  private async judged<T>(call: CallId, ticket: Ticket, attempt: number, exchange: Promise<Exchanged<T>>): Promise<Judged<T>> {
    let exchanged: Exchanged<T>;
    try {
      exchanged = await exchange;
    } catch (error) {
      // Interrupted before it could be answered: not a request the vendor counted.
      if (this.options.signal?.aborted) this.pacer.withdrawn(ticket);
      else this.pacer.answered(ticket);
      throw error;
    }
    let judged: Judged<T>;
    try {
      judged = this.judgedOutcome(call, ticket, attempt, exchanged.outcome);
    } catch (error) {
      this.pacer.answered(ticket, exchanged.headers);
      throw error;
    }
    const down = this.pacer.answered(ticket, exchanged.headers);
    // A spent budget whose reset is beyond the cap, again: the vendor is down for this run.
    if (down) throw down;
    return judged;
  }

  private judgedOutcome<T>(call: CallId, ticket: Ticket, attempt: number, outcome: Outcome<T>): Judged<T> {
    if (outcome.ok) return outcome;
    const { failure } = outcome;
    if (failure.kind === 'final') return { ok: false, failure };
    if (failure.kind === 'transient' && !failure.throttled) {
      const timeout = failure.timedOut ? { sentAt: ticket.send.at, at: this.clock.now() } : undefined;
      const down = this.pacer.outage.failed(call, failure.reason, timeout);
      if (down) throw down;
    } else {
      this.pacer.outage.answered();
    }
    const waitMs = this.waitAfter(failure, attempt);
    if (failure.kind === 'transient' && failure.retryAfterMs !== undefined) {
      const down = this.pacer.asked(ticket, failure.retryAfterMs, `${failure.reason.split(' (')[0]} with Retry-After`);
      if (down) throw down;
      if (!failure.throttled) this.pacer.hold(waitMs);
    }
    if (failure.kind === 'transient' && failure.throttled) this.pacer.throttled(ticket, waitMs, failure.retryAfterMs);
    return { ok: false, failure, waitMs };
  }

  /** One request, no retry: its outcome, and the answer's headers (none: it failed on the network or timed out). */
  private async exchange<T>(
    request: HttpRequest,
    parse: (response: HttpResponse) => T | Promise<T>,
    ticket: Ticket,
  ): Promise<Exchanged<T>> {
    const what = describeRequest(request);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = this.options.signal ? AbortSignal.any([this.options.signal, timeout]) : timeout;
    let response: HttpResponse;
    let answered = false;
    const slow = this.whileUnanswered(what, () => answered);
    try {
      response = await fetchBuffered(request, {
        signal,
        onHead: () => {
          answered = true;
          this.pacer.heard(ticket);
        },
        ...(this.options.dispatcher ? { dispatcher: this.options.dispatcher } : {}),
        ...(request.maxBody ? { maxBodyBytes: request.maxBody.bytes } : {}),
      });
    } catch (error) {
      if (this.options.signal?.aborted) this.throwIfInterrupted();
      if (error instanceof BodyTooLargeError && request.maxBody) {
        const message = `${what}: the body is longer than ${request.maxBody.bytes} bytes, ${request.maxBody.what}; the server is not sending the API's pages`;
        return { outcome: { ok: false, failure: { kind: 'final', error: new ContractError(message) } } };
      }
      if (timeout.aborted) {
        return {
          outcome: {
            ok: false,
            failure: {
              kind: 'transient',
              reason: `timed out after ${describeSeconds(this.options.timeoutMs)} (--timeout)`,
              timedOut: true,
            },
          },
        };
      }
      const proxyStatus = proxyStatusOf(error);
      if (proxyStatus === 407) {
        // The same credentials will be refused again: retrying only delays the message.
        const message = `${what}: proxy authentication required (HTTP 407 from the proxy); check the user and password in the proxy variable (HTTP_PROXY/HTTPS_PROXY)`;
        return { outcome: { ok: false, failure: { kind: 'final', error: new UnavailableError(message) } } };
      }
      const reason = proxyStatus === undefined ? `network error: ${networkReason(error)}` : `the proxy answered HTTP ${proxyStatus}`;
      return { outcome: { ok: false, failure: { kind: 'transient', reason } } };
    } finally {
      slow.stop();
    }
    return { outcome: await this.judge(request, response, parse), headers: response.headers };
  }

  /**
   * Says once, at info level, what a request has waited for when it has had no answer for `slowAnswerMs` (cron logs
   * show the line, a terminal shows it above the spinner): a hung vendor is not silence. A real timer, not the
   * clock's: the line is for a person, and a test's virtual clock must not move for it.
   */
  private whileUnanswered(what: string, answered: () => boolean): { stop: () => void } {
    const { timeoutMs } = this.options;
    const slowMs = this.options.slowAnswerMs ?? SLOW_ANSWER_MS;
    if (timeoutMs <= slowMs) return { stop: () => {} };
    const timer = setTimeout(() => {
      if (!answered())
        this.logger.info(`${what}: no answer yet after ${describeSeconds(slowMs)}; waiting up to --timeout ${describeSeconds(timeoutMs)}`);
    }, slowMs);
    timer.unref();
    return { stop: () => clearTimeout(timer) };
  }

  /** A response, as the retry loop decides on it. */
  private async judge<T>(
    request: HttpRequest,
    response: HttpResponse,
    parse: (response: HttpResponse) => T | Promise<T>,
  ): Promise<Outcome<T>> {
    const what = describeRequest(request);
    const { status } = response;
    if ((status >= 200 && status < 300) || request.acceptStatus?.(status)) {
      try {
        return { ok: true, value: await parse(response) };
      } catch (error) {
        if (error instanceof MalformedBodyError) {
          return { ok: false, failure: { kind: 'malformed', reason: `malformed body: ${error.message}` } };
        }
        throw error;
      }
    }
    if (status === 401 || status === 403) {
      const error = new AuthError(`${what}: HTTP ${status}: credentials rejected; check the client id and secret`);
      return { ok: false, failure: { kind: 'final', error } };
    }
    const detail = errorDetail(response.text);
    const reason = `HTTP ${status}${detail ? ` (${detail})` : ''}`;
    if (!RETRYABLE_STATUSES.has(status)) return { ok: false, failure: { kind: 'refused', reason } };
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), this.clock.now());
    return {
      ok: false,
      failure: {
        kind: 'transient',
        reason,
        ...(status === 429 ? { throttled: true } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      },
    };
  }
}
