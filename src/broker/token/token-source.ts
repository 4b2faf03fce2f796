import type { Dispatcher } from 'undici';
import { decodeJwt } from '../../auth/jwt.js';
import { requestClientCredentialsToken } from '../../auth/client-credentials.js';
import { AuthError, ContractError, messageOf } from '../../errors.js';
import { createDispatcher } from '../../fetch/dispatcher.js';
import { parseRetryAfter, type Transport } from '../../fetch/http-client.js';
import { BodyTooLargeError, fetchBuffered, type BufferedResponse, type HttpRequest, type HttpResponse } from '../../fetch/exchange.js';
import { errorDetail, networkReason } from '../../fetch/failure-words.js';
import { createRedactor, type Redactor } from '../../redact.js';
import type { PlatformCredentials } from '../config/config.js';
import { MIN_SERVABLE_MS, tokenExpiry } from './expiry.js';

/** A token as the auth server issued it; `expiresAt` (epoch ms) is absent when it carries neither expires_in nor exp. */
export interface FetchedToken {
  readonly accessToken: string;
  readonly expiresAt?: number;
  /** The validity the auth server claimed, when it was longer than a day and cut to one. */
  readonly cappedFromSeconds?: number;
}

export type AuthFailureKind = 'rejected' | 'unavailable' | 'invalid-response';

/**
 * Why a token could not be had. `rejected`: the auth server refused the credentials (4xx) → 502;
 * `unavailable`: 5xx, 429, timeout, refused → 503 with Retry-After; `invalid-response`: a 2xx that is not a token, a
 * redirect, an answer too large → 502. The message is safe to show and log: it went through the platform's redactor.
 */
export class AuthServerFailure extends Error {
  constructor(
    readonly kind: AuthFailureKind,
    message: string,
    /** The auth server's Retry-After (429, 503), in milliseconds, uncapped. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'AuthServerFailure';
  }
}

/** What one auth-server call ended with, for the metrics: the HTTP status, or why there was none. */
export type AuthCallOutcome = number | 'timeout' | 'network' | 'too-large';

/** Where tokens come from; the broker's cache logic is tested against fakes of this. */
export interface TokenSource {
  /** `onCall` is told how the call ended and how long it took (one call per invocation). */
  fetch(platform: PlatformCredentials, onCall?: (outcome: AuthCallOutcome, seconds: number) => void): Promise<FetchedToken>;
  close(): Promise<void>;
}

/** More than this from the auth server is not a token response: the read stops there (memory and event loop stay free). */
export const MAX_AUTH_BODY_BYTES = 64 * 1024;

// An auth server's own words: OAuth's fields first.
const OAUTH_DETAIL_KEYS = ['error_description', 'error', 'message', 'detail'] as const;

/**
 * One auth-server request for the client-credentials code of the auth module: no retries (the app retries after a
 * 503), one deadline for connecting, queueing, headers and body alike, at most MAX_AUTH_BODY_BYTES read, and every
 * status other than the ones the caller reads itself turned into an AuthServerFailure. Used once per call, so it can
 * remember the call's outcome for the metrics.
 */
class OneAuthCall implements Transport {
  outcome: AuthCallOutcome = 'network';

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly timeoutMs: number,
  ) {}

  async send<T>(request: HttpRequest, parse: (response: HttpResponse) => T | Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: BufferedResponse;
    try {
      response = await fetchBuffered(request, { signal, dispatcher: this.dispatcher, maxBodyBytes: MAX_AUTH_BODY_BYTES });
      this.outcome = response.status;
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        this.outcome = 'too-large';
        throw new AuthServerFailure(
          'invalid-response',
          `auth server answered more than ${MAX_AUTH_BODY_BYTES / 1024} KB; not a token response`,
        );
      }
      if (signal.aborted) {
        this.outcome = 'timeout';
        throw new AuthServerFailure('unavailable', `auth server did not answer within ${this.timeoutMs / 1000} s`);
      }
      this.outcome = 'network';
      throw new AuthServerFailure('unavailable', `auth server unreachable: ${networkReason(error, { codeOnly: true })}`);
    }
    const { status } = response;
    if ((status >= 200 && status < 300) || request.acceptStatus?.(status) === true) return parse(response);
    const detail = errorDetail(response.text, OAUTH_DETAIL_KEYS);
    const described = `HTTP ${status}${detail === undefined ? '' : ` (${detail})`}`;
    if (status >= 300 && status < 400) {
      throw new AuthServerFailure('invalid-response', `auth server redirected (${described}); set authUrl to the final address`);
    }
    if (status === 429 || status >= 500) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      throw new AuthServerFailure('unavailable', `auth server answered ${described}`, retryAfterMs);
    }
    throw new AuthServerFailure('rejected', `auth server answered ${described}`);
  }
}

/** Classifies whatever the auth module threw; anything unexpected is rethrown (a bug → 500). */
function classify(error: unknown): AuthServerFailure {
  if (error instanceof AuthServerFailure) return error;
  if (error instanceof AuthError) return new AuthServerFailure('rejected', messageOf(error));
  if (error instanceof ContractError) return new AuthServerFailure('invalid-response', messageOf(error));
  throw error;
}

export interface AuthServerTokenSourceOptions {
  readonly timeoutMs: number;
  readonly dispatcher?: Dispatcher;
  /** Where the proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are read. */
  readonly env: NodeJS.ProcessEnv;
  readonly now?: () => number;
}

/** Tokens from `{authUrl}/oauth2/token` (client credentials, HTTP Basic). */
export class AuthServerTokenSource implements TokenSource {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly redactors = new Map<string, Redactor>();
  private readonly now: () => number;

  constructor(private readonly options: AuthServerTokenSourceOptions) {
    this.now = options.now ?? Date.now;
    this.ownsDispatcher = options.dispatcher === undefined;
    // No connection limit: at most one call per application is in flight (single-flight), and a pool queue would
    // eat into the auth timeout of calls the auth server would have answered in time.
    this.dispatcher = options.dispatcher ?? createDispatcher({ connections: null, timeoutMs: options.timeoutMs, env: options.env });
  }

  private redactorFor(platform: PlatformCredentials & { clientSecret: string }): Redactor {
    let redact = this.redactors.get(platform.name);
    if (redact === undefined) {
      redact = createRedactor([
        { ...(platform.clientId !== undefined ? { clientId: platform.clientId } : {}), secret: platform.clientSecret },
      ]);
      this.redactors.set(platform.name, redact);
    }
    return redact;
  }

  async fetch(platform: PlatformCredentials, onCall?: (outcome: AuthCallOutcome, seconds: number) => void): Promise<FetchedToken> {
    const { clientId, clientSecret } = platform;
    if (clientId === undefined || clientSecret === undefined) {
      throw new Error(`platform ${platform.name} has no usable credentials`); // the broker checks this first
    }
    const redact = this.redactorFor({ ...platform, clientSecret });
    const call = new OneAuthCall(this.dispatcher, this.options.timeoutMs);
    const sentAt = this.now();
    try {
      const token = await requestClientCredentialsToken(call, {
        authUrl: platform.authUrl,
        credentials: { clientId, clientSecret },
        ...(platform.scope !== undefined ? { scope: platform.scope } : {}),
      });
      const claims = decodeJwt(token.access_token)?.claims;
      const exp = claims?.exp;
      const expiry = tokenExpiry(token.expires_in, typeof exp === 'number' ? exp : undefined, sentAt);
      if (expiry.kind === 'invalid')
        throw new AuthServerFailure('invalid-response', `auth server sent an unusable token: ${expiry.reason}`);
      if (expiry.kind === 'none') return { accessToken: token.access_token };
      if (expiry.expiresAt - this.now() < MIN_SERVABLE_MS) {
        throw new AuthServerFailure('invalid-response', 'auth server sent a token that has already expired (check the clocks)');
      }
      return {
        accessToken: token.access_token,
        expiresAt: expiry.expiresAt,
        ...(expiry.cappedFromSeconds !== undefined ? { cappedFromSeconds: expiry.cappedFromSeconds } : {}),
      };
    } catch (error) {
      const failure = classify(error);
      // The auth server's own words may echo what it received: the secret, or the Authorization header.
      throw new AuthServerFailure(failure.kind, redact(failure.message), failure.retryAfterMs);
    } finally {
      onCall?.(call.outcome, (this.now() - sentAt) / 1000);
    }
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
