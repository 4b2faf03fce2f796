import { setTimeout as delay } from 'node:timers/promises';
import { applicationPackageProblem, type BrokerConfig, type PlatformCredentials } from './config.js';
import { MemoryTokenCache, sharedCacheKey, type CachedToken, type SharedTokenCache } from './cache.js';
import { BrokerProblem } from './problem.js';
import { AuthServerFailure, classifyAuthError, type TokenSource } from './token-source.js';

/**
 * How a token was obtained, for the logs: `hit` from this instance's memory, `shared` from Redis (another instance
 * fetched it), `miss` fetched from the auth server, `coalesced` waited for a fetch already in flight here,
 * `stale` past its refresh point but served because the auth server failed, `uncached` fetched and not cacheable.
 */
export type CacheOutcome = 'hit' | 'shared' | 'miss' | 'coalesced' | 'stale' | 'uncached';

export interface BrokerToken {
  readonly accessToken: string;
  /** Epoch ms; absent for a token that carries neither expires_in nor exp. */
  readonly expiresAt?: number;
  readonly cache: CacheOutcome;
  /** Milliseconds the auth-server request took, when this request made one. */
  readonly authLatencyMs?: number;
  /** Why a stale token was served instead of a 503. */
  readonly staleReason?: string;
}

/** What the broker core reports; the server logs it through pino. Never receives a token or secret. */
export interface BrokerEvents {
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
}

export interface TokenBrokerOptions {
  readonly config: BrokerConfig;
  readonly source: TokenSource;
  readonly shared?: SharedTokenCache;
  readonly events?: BrokerEvents;
  readonly now?: () => number;
  /** Lifetime of the cross-instance refresh lock; default: the auth timeout plus one second. */
  readonly lockTtlMs?: number;
  /** How long an instance that lost the lock waits for the winner's token before fetching itself. */
  readonly lockWaitMs?: number;
  /** How often the loser looks in Redis for the winner's token. */
  readonly lockPollMs?: number;
}

/** How long a stale token is served after an auth-server failure before the auth server is tried again. */
export const STALE_RETRY_AFTER_MS = 5000;

interface Flight {
  readonly promise: Promise<BrokerToken>;
}

/** Validates the query value; throws the 400 problems of seed section 7. */
export function parseApplicationPackage(value: unknown): string {
  if (value === undefined) {
    throw new BrokerProblem('missing-application-package', 'the query parameter application_package is required');
  }
  if (typeof value !== 'string') {
    throw new BrokerProblem('invalid-application-package', 'application_package must be given exactly once');
  }
  const problem = applicationPackageProblem(value);
  if (problem) throw new BrokerProblem('invalid-application-package', `application_package ${problem}`);
  return value;
}

/**
 * The broker's core (seed 4.4 and 5): application → platform credentials → cached token, or one auth-server request
 * shared by every concurrent miss (in this process by a promise, across instances by a Redis lock).
 */
export class TokenBroker {
  private readonly memory = new MemoryTokenCache();
  private readonly flights = new Map<string, Flight>();
  /** After an auth-server outage, until when a stale token is served without asking the auth server again. */
  private readonly staleUntil = new Map<string, number>();
  private readonly now: () => number;
  private readonly marginMs: number;
  private readonly lockTtlMs: number;
  private readonly lockWaitMs: number;
  private readonly lockPollMs: number;

  constructor(private readonly options: TokenBrokerOptions) {
    this.now = options.now ?? Date.now;
    this.marginMs = options.config.marginSeconds * 1000;
    this.lockTtlMs = options.lockTtlMs ?? options.config.authTimeoutMs + 1000;
    this.lockWaitMs = options.lockWaitMs ?? this.lockTtlMs;
    this.lockPollMs = options.lockPollMs ?? 25;
  }

  /** The platform of an application, or the 400/401 problem of seed section 7. */
  platformOf(application: string): PlatformCredentials {
    const platformName = this.options.config.applications.get(application);
    const platform = platformName === undefined ? undefined : this.options.config.platforms.get(platformName);
    if (platform === undefined) {
      throw new BrokerProblem('unknown-application', `application_package ${JSON.stringify(application)} is not configured`);
    }
    if (platform.unusableReason !== undefined || platform.clientId === undefined || platform.clientSecret === undefined) {
      throw new BrokerProblem(
        'credentials-not-configured',
        `no usable credentials for the ${platform.name} platform of this application; the operator must configure them`,
      );
    }
    return platform;
  }

  /**
   * The answer when it needs no I/O: a fresh token in this instance's memory, or a stale one while the auth server
   * is failing. Synchronous, so the server answers a cache hit without a promise. Throws the 400/401 problems.
   */
  cachedToken(application: string): BrokerToken | undefined {
    this.platformOf(application);
    const now = this.now();
    const cached = this.memory.get(application, now);
    if (cached === undefined) return undefined;
    if (now < cached.refreshAt) return { accessToken: cached.accessToken, expiresAt: cached.expiresAt, cache: 'hit' };
    // A failing auth server is not asked again by every request: each would wait for its timeout first.
    if (now < (this.staleUntil.get(application) ?? 0)) return { accessToken: cached.accessToken, expiresAt: cached.expiresAt, cache: 'stale' };
    return undefined;
  }

  /** A token for the application; throws BrokerProblem for every answer other than 200. */
  async token(application: string): Promise<BrokerToken> {
    const ready = this.cachedToken(application);
    if (ready !== undefined) return ready;
    const platform = this.platformOf(application);
    const inFlight = this.flights.get(application);
    if (inFlight) {
      const token = await inFlight.promise;
      return { ...token, cache: 'coalesced' };
    }
    const promise = this.refresh(application, platform).finally(() => this.flights.delete(application));
    this.flights.set(application, { promise });
    return promise;
  }

  private entryFor(accessToken: string, expiresAt: number): CachedToken {
    return { accessToken, expiresAt, refreshAt: expiresAt - this.marginMs };
  }

  /** The still-valid token to fall back on: memory's or the shared cache's, whichever lasts longer. */
  private freshest(...entries: (CachedToken | undefined)[]): CachedToken | undefined {
    let best: CachedToken | undefined;
    for (const entry of entries) {
      if (entry && entry.expiresAt > this.now() && (!best || entry.expiresAt > best.expiresAt)) best = entry;
    }
    return best;
  }

  private async refresh(application: string, platform: PlatformCredentials): Promise<BrokerToken> {
    const shared = this.usableShared();
    const key = sharedCacheKey(application, platform);
    let stale = this.memory.get(application, this.now());
    if (!shared) return this.fetchAndStore(application, platform, undefined, key, stale);

    const deadline = this.now() + this.lockWaitMs;
    for (;;) {
      const fromShared = await this.sharedGet(shared, key);
      if (fromShared && this.now() < fromShared.refreshAt) {
        this.memory.set(application, fromShared);
        return { ...fromShared, cache: 'shared' };
      }
      stale = this.freshest(stale, fromShared);
      const owner = await this.sharedTryLock(shared, key);
      if (owner === false) break; // Redis failed: carry on alone
      if (owner !== undefined) {
        try {
          // Another instance may have stored a token between our read and our lock: look once more.
          const again = await this.sharedGet(shared, key);
          if (again && this.now() < again.refreshAt) {
            this.memory.set(application, again);
            return { ...again, cache: 'shared' };
          }
          return await this.fetchAndStore(application, platform, shared, key, this.freshest(stale, again));
        } finally {
          await shared.unlock(key, owner).catch(() => undefined);
        }
      }
      if (this.now() >= deadline) {
        this.options.events?.warn('gave up waiting for another instance\'s token refresh; fetching one here', {
          application,
          waitedMs: this.lockWaitMs,
        });
        break;
      }
      await delay(this.lockPollMs);
    }
    return this.fetchAndStore(application, platform, this.usableShared(), key, stale);
  }

  private usableShared(): SharedTokenCache | undefined {
    const shared = this.options.shared;
    return shared && shared.status() === 'up' ? shared : undefined;
  }

  private async sharedGet(shared: SharedTokenCache, key: string): Promise<CachedToken | undefined> {
    try {
      return await shared.get(key);
    } catch {
      return undefined; // status events report Redis outages; a miss here just means "ask the auth server"
    }
  }

  /** The lock owner, undefined when another instance holds it, false when Redis failed. */
  private async sharedTryLock(shared: SharedTokenCache, key: string): Promise<string | undefined | false> {
    try {
      return await shared.tryLock(key, this.lockTtlMs);
    } catch {
      return false;
    }
  }

  private async fetchAndStore(
    application: string,
    platform: PlatformCredentials,
    shared: SharedTokenCache | undefined,
    key: string,
    stale: CachedToken | undefined,
  ): Promise<BrokerToken> {
    const startedAt = this.now();
    let fetched;
    try {
      fetched = await this.options.source.fetch(platform);
    } catch (error) {
      const failure = classifyAuthError(error);
      const authLatencyMs = this.now() - startedAt;
      const fallback = this.freshest(stale, this.memory.get(application, this.now()));
      // Stale-while-failing: an auth-server outage must not take every app down while a valid token exists.
      // A rejection (revoked credentials) is not an outage, so it is not papered over.
      if (failure.kind !== 'rejected' && fallback && fallback.expiresAt - this.now() >= 1000) {
        this.options.events?.warn('auth server failed; serving a cached token past its refresh point', {
          application,
          platform: platform.name,
          reason: failure.message,
          expiresInSeconds: Math.floor((fallback.expiresAt - this.now()) / 1000),
        });
        this.staleUntil.set(application, this.now() + STALE_RETRY_AFTER_MS);
        return { ...fallback, cache: 'stale', authLatencyMs, staleReason: failure.message };
      }
      throw problemFor(failure, platform);
    }
    const authLatencyMs = this.now() - startedAt;
    if (fetched.expiresAt === undefined) {
      this.options.events?.warn('token has neither expires_in nor exp; returned but not cached', {
        application,
        platform: platform.name,
      });
      return { accessToken: fetched.accessToken, cache: 'uncached', authLatencyMs };
    }
    const entry = this.entryFor(fetched.accessToken, fetched.expiresAt.getTime());
    if (entry.refreshAt <= this.now()) {
      this.options.events?.warn('token lifetime is not longer than the cache margin; every request will fetch a new one', {
        application,
        platform: platform.name,
        lifetimeSeconds: Math.floor((entry.expiresAt - this.now()) / 1000),
        marginSeconds: this.options.config.marginSeconds,
      });
    }
    this.memory.set(application, entry);
    this.staleUntil.delete(application);
    if (shared) await shared.set(key, entry, this.now()).catch(() => undefined);
    return { ...entry, cache: 'miss', authLatencyMs };
  }
}

/** Client-facing details stay generic: the auth server's own message names its URL, which is kept server-side. */
function problemFor(failure: AuthServerFailure, platform: PlatformCredentials): BrokerProblem {
  const where = `the auth server of the ${platform.name} platform`;
  switch (failure.kind) {
    case 'rejected':
      return new BrokerProblem(
        'auth-server-rejected',
        `${where} rejected the broker's token request; the operator must check this platform's credentials`,
        failure.message,
      );
    case 'invalid-response':
      return new BrokerProblem('auth-server-invalid-response', `${where} answered without a usable token`, failure.message);
    case 'unavailable':
      return new BrokerProblem('auth-server-unavailable', `${where} is unavailable; retry later`, failure.message);
  }
}
