import { importJWK, type CryptoKey, type JWK } from 'jose';
import type { Dispatcher } from 'undici';
import { messageOf } from '../../errors.js';
import { createDispatcher } from '../../fetch/dispatcher.js';
import { BodyTooLargeError, fetchBuffered } from '../../fetch/exchange.js';
import { networkReason } from '../../fetch/failure-words.js';

/** Keys are kept for their Cache-Control max-age, never longer than this. */
export const MAX_KEYS_AGE_MS = 6 * 60 * 60 * 1000;
/** Without a max-age the keys are looked up again after this (they keep working meanwhile). */
const DEFAULT_KEYS_AGE_MS = 5 * 60 * 1000;
/** The issuer is asked at most this often: for an unknown `kid`, keys past their age, or none held. */
export const KEYS_REFETCH_INTERVAL_MS = 30_000;
const MAX_JWKS_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5000;

/** The algorithms a token may be signed with: never `none`, never an HMAC one (the public key is not a secret). */
export const ALLOWED_ALGORITHMS = ['RS256', 'ES256'] as const;
export type AllowedAlgorithm = (typeof ALLOWED_ALGORITHMS)[number];
const KEY_TYPE: Record<AllowedAlgorithm, string> = { RS256: 'RSA', ES256: 'EC' };

/** `fresh` within its max-age, `stale` past it (the issuer could not be reached: still used), `none` yet. */
export type KeysState = 'fresh' | 'stale' | 'none';

export interface KeysStatus {
  readonly state: KeysState;
  readonly keys: number;
  readonly fetchedAt?: string;
  /** Why the last fetch failed, while it is the last word. */
  readonly lastError?: string;
}

interface HeldKeys {
  readonly byKid: ReadonlyMap<string, JWK>;
  readonly fetchedAt: number;
  readonly freshUntil: number;
}

export interface AttestationKeysOptions {
  readonly jwksUrl: string;
  readonly now: () => number;
  readonly env: NodeJS.ProcessEnv;
  readonly log: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;
}

/** Seconds of `max-age` in a Cache-Control header, as milliseconds capped at MAX_KEYS_AGE_MS. */
function maxAgeMs(cacheControl: string | null): number {
  const match = cacheControl === null ? null : /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl);
  return match === null ? DEFAULT_KEYS_AGE_MS : Math.min(Number(match[1]) * 1000, MAX_KEYS_AGE_MS);
}

/** Why a key-set fetch failed, in a few words: never empty, so the warning always says why. */
function fetchFailure(error: unknown): string {
  if (error instanceof SyntaxError) return 'not JSON';
  if (error instanceof BodyTooLargeError) return `answer over ${MAX_JWKS_BYTES / 1024} KB`;
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${FETCH_TIMEOUT_MS / 1000} s`;
  const reason = networkReason(error, { codeOnly: true }) || messageOf(error);
  return reason === '' ? (error instanceof Error ? error.name : 'unknown') : reason;
}

/** The keys of a JWKS answer that can verify a token: RSA and EC keys with a `kid`. */
function usableKeys(json: unknown): Map<string, JWK> {
  const keys = typeof json === 'object' && json !== null ? (json as { keys?: unknown }).keys : undefined;
  const byKid = new Map<string, JWK>();
  if (!Array.isArray(keys)) return byKid;
  for (const key of keys as unknown[]) {
    if (typeof key !== 'object' || key === null) continue;
    const jwk = key as JWK;
    if (typeof jwk.kid === 'string' && (jwk.kty === 'RSA' || jwk.kty === 'EC')) byKid.set(jwk.kid, jwk);
  }
  return byKid;
}

/**
 * The issuer's public keys (its JWKS): fetched at start (a failure is a warning), kept for their max-age (at most
 * 6 h), looked up again at most every 30 s for a `kid` they do not hold or once they are past their age, and kept
 * working while the issuer cannot be reached. An instance that holds none says so (`none`): it cannot verify.
 */
export class AttestationKeys {
  private held: HeldKeys | undefined;
  private lastAttemptAt = Number.NEGATIVE_INFINITY;
  private lastError: string | undefined;
  private fetching: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Imported keys, by kid and algorithm (importing costs more than a verification). */
  private readonly imported = new Map<string, CryptoKey>();
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: AttestationKeysOptions) {
    this.dispatcher = createDispatcher({ connections: 2, timeoutMs: FETCH_TIMEOUT_MS, env: options.env });
  }

  /** The first fetch, in the background: start-up does not wait for the issuer. */
  start(): void {
    void this.refresh();
  }

  /**
   * The key a token names, ready to verify with `alg`: `unknown` when the keys held do not have it (after one more
   * look at the issuer, at most every 30 s), `none` when no keys are held at all. A token whose key is held never
   * waits for the issuer: keys past their max-age are fetched again in the background while they answer. Only a
   * token naming a `kid` not held waits for a fetch (one it starts, or one in flight), and at most FETCH_TIMEOUT_MS.
   */
  async keyFor(kid: string, alg: AllowedAlgorithm): Promise<CryptoKey | 'unknown' | 'none'> {
    const now = this.options.now();
    const mayFetch = now - this.lastAttemptAt >= KEYS_REFETCH_INTERVAL_MS;
    const held = this.held;
    if (held !== undefined && now >= held.freshUntil && mayFetch) void this.refresh();
    let jwk = held?.byKid.get(kid);
    if (jwk === undefined) {
      if (mayFetch) void this.refresh();
      if (this.fetching !== undefined) await this.untilFetchedOrTimeout(this.fetching);
      jwk = this.held?.byKid.get(kid);
      if (jwk === undefined) return this.held === undefined ? 'none' : 'unknown';
    }
    // A key is used only with the algorithm it is for: an RSA key never verifies an ES256 signature, nor one of
    // another algorithm its issuer pinned.
    if (jwk.kty !== KEY_TYPE[alg] || (jwk.alg !== undefined && jwk.alg !== alg)) return 'unknown';
    const id = `${kid} ${alg}`;
    let key = this.imported.get(id);
    if (key === undefined) {
      try {
        key = (await importJWK(jwk, alg)) as CryptoKey;
      } catch {
        return 'unknown';
      }
      this.imported.set(id, key);
    }
    return key;
  }

  /** Waits for a fetch, never longer than a fetch may take (its timeout covers the answer, not every stall). */
  private untilFetchedOrTimeout(fetching: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, FETCH_TIMEOUT_MS).unref();
    });
    return Promise.race([fetching, timeout]).finally(() => clearTimeout(timer));
  }

  /** Seconds until the issuer is asked again, for a 503's Retry-After. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.lastAttemptAt + KEYS_REFETCH_INTERVAL_MS - this.options.now()) / 1000));
  }

  status(): KeysStatus {
    const held = this.held;
    const lastError = this.lastError === undefined ? {} : { lastError: this.lastError };
    if (held === undefined) return { state: 'none', keys: 0, ...lastError };
    const state = this.options.now() < held.freshUntil ? 'fresh' : 'stale';
    return { state, keys: held.byKid.size, fetchedAt: new Date(held.fetchedAt).toISOString(), ...lastError };
  }

  /** Stops retrying and aborts a fetch in flight (the broker is stopping: it does not wait for the issuer). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.dispatcher.destroy();
  }

  private refresh(): Promise<void> {
    this.fetching ??= this.fetchKeys().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  private async fetchKeys(): Promise<void> {
    this.lastAttemptAt = this.options.now();
    clearTimeout(this.retryTimer);
    const { jwksUrl, log } = this.options;
    let failure: string;
    try {
      const response = await fetchBuffered(
        { method: 'GET', url: new URL(jwksUrl), headers: { accept: 'application/json' } },
        { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), dispatcher: this.dispatcher, maxBodyBytes: MAX_JWKS_BYTES },
      );
      if (response.status !== 200) {
        failure = `HTTP ${response.status}`;
      } else {
        const byKid = usableKeys(JSON.parse(response.text) as unknown);
        if (byKid.size > 0) {
          const now = this.options.now();
          this.held = { byKid, fetchedAt: now, freshUntil: now + maxAgeMs(response.headers.get('cache-control')) };
          this.imported.clear();
          this.lastError = undefined;
          log('info', 'attestation keys fetched', {
            jwksUrl,
            keys: byKid.size,
            maxAgeSeconds: Math.round((this.held.freshUntil - now) / 1000),
          });
          return;
        }
        failure = 'no RS256 or ES256 key with a kid';
      }
    } catch (error) {
      failure = fetchFailure(error);
    }
    this.lastError = failure;
    if (this.closed) return;
    const held = this.held;
    if (held === undefined) {
      log('warn', 'attestation keys could not be fetched; none held, so tokens cannot be verified (enforce answers 503)', {
        jwksUrl,
        reason: failure,
      });
      // Retried without traffic too: a load balancer keeps an instance without keys out of rotation.
      this.retryTimer = setTimeout(() => void this.refresh(), KEYS_REFETCH_INTERVAL_MS).unref();
    } else {
      log('warn', 'attestation keys could not be fetched again; the keys held keep working', {
        jwksUrl,
        reason: failure,
        keys: held.byKid.size,
      });
    }
  }
}
