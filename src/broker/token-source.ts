import type { Dispatcher } from 'undici';
import { requestClientCredentialsToken, tokenLifetime } from '../auth/client-credentials.js';
import { AuthError, ContractError, UnavailableError, messageOf } from '../errors.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { HttpClient, type HttpRequest, type HttpResponse } from '../fetch/http-client.js';
import type { PlatformCredentials } from './config.js';

/** A token as the auth server issued it; `expiresAt` is absent when it carries neither expires_in nor exp. */
export interface FetchedToken {
  readonly accessToken: string;
  readonly expiresAt?: Date;
}

/**
 * Why a token could not be had. `rejected`: the auth server refused the credentials (4xx) → 502;
 * `unavailable`: 5xx, 429, timeout, refused → 503 with Retry-After; `invalid-response`: a 2xx that is not a token → 502.
 * The message is safe to show and log: no secret, no token.
 */
export class AuthServerFailure extends Error {
  constructor(
    readonly kind: 'rejected' | 'unavailable' | 'invalid-response',
    message: string,
  ) {
    super(message);
    this.name = 'AuthServerFailure';
  }
}

/** Where tokens come from; the broker's cache logic is tested against fakes of this. */
export interface TokenSource {
  fetch(platform: PlatformCredentials): Promise<FetchedToken>;
  close(): Promise<void>;
}

/** An auth-server answer with a 4xx status that the auth module does not read itself (e.g. 404, 405, 429). */
class AuthServerStatusError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/**
 * HttpClient that surfaces every 4xx as a typed error carrying the status, so the broker can tell "the auth server
 * refused" (502) from "the auth server is down" (503) without parsing messages.
 */
class StatusAwareHttpClient extends HttpClient {
  override send<T>(request: HttpRequest, parse: (response: HttpResponse) => T | Promise<T>): Promise<T> {
    const callerAccepts = request.acceptStatus;
    const isClientError = (status: number): boolean => status >= 400 && status < 500;
    return super.send(
      { ...request, acceptStatus: (status) => callerAccepts?.(status) === true || isClientError(status) },
      (response) => {
        if (isClientError(response.status) && callerAccepts?.(response.status) !== true) {
          throw new AuthServerStatusError(response.status);
        }
        return parse(response);
      },
    );
  }
}

/** Classifies whatever the auth module threw; anything unexpected is rethrown (a bug → 500). */
export function classifyAuthError(error: unknown): AuthServerFailure {
  if (error instanceof AuthServerFailure) return error;
  if (error instanceof AuthServerStatusError) {
    return error.status === 429
      ? new AuthServerFailure('unavailable', 'auth server is rate limiting (HTTP 429)')
      : new AuthServerFailure('rejected', `auth server answered HTTP ${error.status}`);
  }
  if (error instanceof AuthError) return new AuthServerFailure('rejected', messageOf(error));
  if (error instanceof UnavailableError) return new AuthServerFailure('unavailable', messageOf(error));
  if (error instanceof ContractError) return new AuthServerFailure('invalid-response', messageOf(error));
  throw error;
}

export interface AuthServerTokenSourceOptions {
  readonly timeoutMs: number;
  readonly dispatcher?: Dispatcher;
}

/** Tokens from `{authUrl}/oauth2/token` (client credentials, HTTP Basic). No retries: the app retries after a 503. */
export class AuthServerTokenSource implements TokenSource {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly http: HttpClient;

  constructor(options: AuthServerTokenSourceOptions) {
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? createDispatcher({ timeoutMs: options.timeoutMs, connections: 16 });
    this.http = new StatusAwareHttpClient({
      dispatcher: this.dispatcher,
      timeoutMs: options.timeoutMs,
      retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0, maxRetryAfterMs: 0 },
    });
  }

  async fetch(platform: PlatformCredentials): Promise<FetchedToken> {
    if (platform.clientId === undefined || platform.clientSecret === undefined) {
      throw new Error(`platform ${platform.name} has no usable credentials`); // the broker checks this first
    }
    const requestSentAt = new Date();
    try {
      const token = await requestClientCredentialsToken(this.http, {
        authUrl: platform.authUrl,
        credentials: { clientId: platform.clientId, clientSecret: platform.clientSecret },
        ...(platform.scope !== undefined ? { scope: platform.scope } : {}),
      });
      const lifetime = tokenLifetime(token, requestSentAt);
      return { accessToken: token.access_token, ...(lifetime.expiresAt ? { expiresAt: lifetime.expiresAt } : {}) };
    } catch (error) {
      throw classifyAuthError(error);
    }
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
