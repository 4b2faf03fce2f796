import { setTimeout as delay } from 'node:timers/promises';
import { messageOf } from '../../errors.js';
import { AuthBackoff, type BackoffState } from './backoff.js';
import { MemoryTokenCache, sharedCacheKey, type CachedToken, type SharedTokenCache } from './cache.js';
import type { BrokerConfig, PlatformCredentials } from '../config/config.js';
import { applicationPackageProblem } from '../config/config-schema.js';
import { planCache } from './expiry.js';
import { BrokerProblem } from '../problem.js';
import { AuthServerFailure, type AuthCallOutcome, type AuthFailureKind, type FetchedToken, type TokenSource } from './token-source.js';

/**
 * How a token was obtained, for the logs and metrics: `hit` from this instance's memory (possibly starting a
 * background refresh), `shared` from Redis (another instance fetched it), `miss` fetched from the auth server,
 * `coalesced` waited for a fetch already in flight here, `stale` past its refresh point but served because the auth
 * server failed.
 */
export type CacheOutcome = 'hit' | 'shared' | 'miss' | 'coalesced' | 'stale';

export interface BrokerToken {
  readonly accessToken: string;
  /** Epoch ms; absent for a token that carries neither expires_in nor exp. */
  readonly expiresAt?: number;
  readonly cache: CacheOutcome;
  /** Milliseconds the auth-server request took, when this request made one. */
  readonly authLatencyMs?: number;
}

/** What the broker core reports; the server logs it through pino. Never receives a token or secret. */
export interface BrokerEvents {
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  /** One auth-server call ended (for the metrics). */
  authCall?(outcome: AuthCallOutcome, seconds: number): void;
}

export interface TokenBrokerOptions {
  readonly config: BrokerConfig;
  readonly source: TokenSource;
  readonly shared?: SharedTokenCache;
  readonly events?: BrokerEvents;
  readonly now?: () => number;
  /** Lifetime of the cross-instance refresh lock; default: the auth timeout plus one second. */
  readonly lockTtlMs?: number;
  /** How often an instance that lost the lock looks in Redis for the winner's token. */
  readonly lockPollMs?: number;
  /**
   * Reads a platform's secret again after the auth server refused it (it may have been rotated); returns the config
   * holding the new secret, or undefined when it did not change. The refused call is then made once more.
   */
  readonly rereadSecret?: (platform: string) => BrokerConfig | undefined;
}

/** What a platform can do now: `ok`, `rejected` (the auth server refused its credentials), `unset` (no usable secret), `backing-off`. */
export type PlatformState = 'ok' | 'rejected' | 'unset' | 'backing-off';

interface Obtained {
  readonly entry: CachedToken;
  readonly cache: 'shared' | 'miss';
  readonly authLatencyMs?: number;
}

const TIMED_OUT = Symbol('timed out');

/** Validates the query value; throws a 400 problem when it is missing, repeated or malformed. */
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

function served(entry: CachedToken, cache: CacheOutcome): BrokerToken {
  return entry.expiresAt === undefined
    ? { accessToken: entry.accessToken, cache }
    : { accessToken: entry.accessToken, expiresAt: entry.expiresAt, cache };
}

/**
 * The broker's core: application → platform credentials → cached token, or one auth-server request
 * shared by every concurrent miss (in this process by a promise, across instances by a Redis lock). A token near its
 * end is refreshed ahead, in the background, while it is still served; a request waits only when no cached token has
 * more than the margin left, and never longer than the auth timeout. A failing auth server is left alone for a while
 * (per platform, see AuthBackoff), and a still-valid token is served meanwhile.
 */
export class TokenBroker {
  private readonly memory = new MemoryTokenCache();
  private readonly flights = new Map<string, Promise<Obtained>>();
  /** Applications whose last refresh failed (how), so that nobody waits for the next attempt while a token is valid. */
  private readonly refreshFailures = new Map<string, AuthFailureKind>();
  private readonly backoff: AuthBackoff;
  private readonly now: () => number;
  private readonly marginMs: number;
  private readonly lockTtlMs: number;
  private readonly lockPollMs: number;
  private config: BrokerConfig;
  /** Platforms whose last auth-server answer refused their credentials. */
  private readonly rejected = new Set<string>();

  constructor(private readonly options: TokenBrokerOptions) {
    this.config = options.config;
    this.now = options.now ?? Date.now;
    this.marginMs = options.config.marginSeconds * 1000;
    this.lockTtlMs = options.lockTtlMs ?? options.config.authTimeoutMs + 1000;
    this.lockPollMs = options.lockPollMs ?? 25;
    const events = options.events;
    this.backoff = new AuthBackoff(this.now, {
      opened: (platform, state, windowMs) =>
        events?.warn('auth server failed; no calls for this platform during the back-off, valid cached tokens are served', {
          platform,
          reason: state.reason,
          failures: state.failures,
          backoffSeconds: Math.round(windowMs / 100) / 10,
        }),
      closed: (platform, failures) => events?.info('auth server answers again; back-off ended', { platform, failures }),
    });
  }

  /**
   * Applies a new config (a reload, a rotated secret). Cached tokens stay: they are valid whatever the new secret; a
   * platform whose credentials changed gets another chance at the auth server.
   */
  setConfig(config: BrokerConfig): void {
    for (const [name, platform] of config.platforms) {
      const before = this.config.platforms.get(name);
      if (
        before?.clientSecret !== platform.clientSecret ||
        before?.clientId !== platform.clientId ||
        before?.authUrl !== platform.authUrl
      ) {
        this.rejected.delete(name);
        this.backoff.forget(name);
      }
    }
    this.config = config;
  }

  /** Every configured platform's state, for /readyz and the metrics. */
  platformStates(): Map<string, PlatformState> {
    const states = new Map<string, PlatformState>();
    for (const [name, platform] of this.config.platforms) {
      if (platform.unusableReason !== undefined || platform.clientSecret === undefined) states.set(name, 'unset');
      else if (this.rejected.has(name)) states.set(name, 'rejected');
      else if (this.backoff.holding(name) !== undefined) states.set(name, 'backing-off');
      else states.set(name, 'ok');
    }
    return states;
  }

  /** Platform name → the back-off holding its calls now, if any (for the metrics). */
  backoffStates(): Map<string, BackoffState | undefined> {
    return this.backoff.snapshot();
  }

  /** The platform of an application; an unknown application is a 400, a platform without usable credentials a 401. */
  platformOf(application: string): PlatformCredentials {
    const platformName = this.config.applications.get(application);
    const platform = platformName === undefined ? undefined : this.config.platforms.get(platformName);
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
   * The answer when it needs no waiting: a token in this instance's memory that has more than the margin left
   * (starting one background refresh when it is within twice the margin), or one past that point while the auth
   * server is failing. Synchronous, so the server answers it without a promise. Throws the 400/401 problems.
   */
  cachedToken(application: string): BrokerToken | undefined {
    const platform = this.platformOf(application);
    const now = this.now();
    const entry = this.memory.get(application, now);
    if (entry === undefined) return undefined;
    if (now < entry.refreshAheadAt) return served(entry, 'hit');
    if (now < entry.refreshAt) {
      this.refreshInBackground(application, platform);
      return served(entry, 'hit');
    }
    // Past its refresh point: nobody waits for a refresh that just failed (a rejection is not papered over).
    const failure = this.refreshFailures.get(application) ?? this.backoff.holding(platform.name)?.kind;
    if (failure !== undefined && failure !== 'rejected') {
      this.refreshInBackground(application, platform);
      return served(entry, 'stale');
    }
    return undefined;
  }

  /** A token for the application; throws BrokerProblem for every answer other than 200. */
  async token(application: string): Promise<BrokerToken> {
    const ready = this.cachedToken(application);
    if (ready !== undefined) return ready;
    const platform = this.platformOf(application);
    const held = this.backoff.holding(platform.name);
    if (held !== undefined) return this.staleOr(application, held.kind, () => this.problemFor(held.kind, held.reason, platform));
    const deadline = this.now() + this.config.authTimeoutMs;
    let flight = this.flights.get(application);
    const own = flight === undefined;
    flight ??= this.startFlight(application, platform, false);
    let obtained: Obtained | typeof TIMED_OUT;
    try {
      obtained = await within(flight, deadline - this.now());
    } catch (error) {
      if (!(error instanceof AuthServerFailure)) throw error;
      return this.staleOr(application, error.kind, () => this.problemFor(error.kind, error.message, platform));
    }
    if (obtained === TIMED_OUT) {
      const reason = `no token within the auth timeout (${this.config.authTimeoutMs / 1000} s)`;
      return this.staleOr(application, 'unavailable', () => this.problemFor('unavailable', reason, platform));
    }
    const token = served(obtained.entry, own ? obtained.cache : 'coalesced');
    return own && obtained.authLatencyMs !== undefined ? { ...token, authLatencyMs: obtained.authLatencyMs } : token;
  }

  /** Stale-while-failing: a still-valid token beats a 503; a rejection (revoked credentials) is not papered over. */
  private staleOr(application: string, kind: AuthFailureKind, problem: () => BrokerProblem): BrokerToken {
    const stale = kind === 'rejected' ? undefined : this.memory.get(application, this.now());
    if (stale === undefined) throw problem();
    return served(stale, 'stale');
  }

  /** A 503's Retry-After is what is left of the back-off, or (a call still running) the back-off that would follow it. */
  private problemFor(kind: AuthFailureKind, reason: string, platform: PlatformCredentials): BrokerProblem {
    const held = this.backoff.holding(platform.name);
    const waitMs = held === undefined ? this.backoff.nextWindowMs(platform.name) : held.until - this.now();
    return problemFor(kind, reason, platform, Math.max(1, Math.ceil(waitMs / 1000)));
  }

  private refreshInBackground(application: string, platform: PlatformCredentials): void {
    if (this.flights.has(application) || this.backoff.holding(platform.name) !== undefined) return;
    this.startFlight(application, platform, true).catch((error: unknown) => {
      // An auth-server failure is reported by the back-off; anything else is a bug worth a line.
      if (!(error instanceof AuthServerFailure)) {
        this.options.events?.warn('background token refresh failed', { application, reason: messageOf(error) });
      }
    });
  }

  private startFlight(application: string, platform: PlatformCredentials, background: boolean): Promise<Obtained> {
    const promise = this.obtain(application, platform, background).then(
      (obtained) => {
        this.refreshFailures.delete(application);
        return obtained;
      },
      (error: unknown) => {
        if (error instanceof AuthServerFailure) this.refreshFailures.set(application, error.kind);
        throw error;
      },
    );
    this.flights.set(application, promise);
    // Settled → no longer in flight (the flight's own outcome is for its waiters).
    promise.then(
      () => this.flights.delete(application),
      () => this.flights.delete(application),
    );
    return promise;
  }

  /**
   * A new token: from Redis when another instance stored one, else from the auth server by the instance that holds
   * the application's refresh lock. Lock losers wait for the winner's token in Redis and never call themselves.
   */
  private async obtain(application: string, platform: PlatformCredentials, background: boolean): Promise<Obtained> {
    const shared = this.usableShared();
    if (shared === undefined) return this.fetchAndStore(application, platform);
    const key = sharedCacheKey(application, platform);
    const deadline = this.now() + this.config.authTimeoutMs;
    // A background refresh wants a token newer than the one it refreshes; a waiting request any with the margin left.
    const newEnough = (entry: CachedToken | undefined): entry is CachedToken =>
      entry !== undefined && this.now() < (background ? entry.refreshAheadAt : entry.refreshAt);
    for (;;) {
      const fromShared = await this.sharedGet(shared, key);
      if (fromShared !== undefined) this.memory.offer(application, fromShared, this.now());
      if (newEnough(fromShared)) return { entry: fromShared, cache: 'shared' };
      let owner = await this.sharedTryLock(shared, key);
      if (owner === false) return this.fetchAndStore(application, platform); // Redis failed: carry on alone
      if (owner !== undefined) {
        try {
          // Another instance may have stored a token between our read and our lock: look once more.
          const again = await this.sharedGet(shared, key);
          if (newEnough(again)) {
            this.memory.offer(application, again, this.now());
            return { entry: again, cache: 'shared' };
          }
          return await this.fetchAndStore(application, platform, { shared, key });
        } catch (error) {
          // Keep the lock for this platform's back-off: the other instances then wait instead of calling.
          const held = this.backoff.holding(platform.name);
          if (held !== undefined) {
            await shared.extendLock(key, owner, held.until - this.now()).catch(() => undefined);
            owner = undefined;
          }
          throw error;
        } finally {
          if (owner !== undefined) await shared.unlock(key, owner).catch(() => undefined);
        }
      }
      if (this.now() >= deadline) {
        throw new AuthServerFailure(
          'unavailable',
          'another instance holds the refresh lock and stored no new token within the auth timeout',
        );
      }
      await delay(this.lockPollMs);
    }
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
    target?: { shared: SharedTokenCache; key: string },
    secretReread = false,
  ): Promise<Obtained> {
    const sentAt = this.now();
    let fetched: FetchedToken;
    try {
      fetched = await this.options.source.fetch(platform, (outcome, seconds) => this.options.events?.authCall?.(outcome, seconds));
    } catch (error) {
      if (error instanceof AuthServerFailure && error.kind === 'rejected' && !secretReread) {
        // A rotated secret file: the refused secret may be the old one. One more call with the new one.
        const renewed = this.options.rereadSecret?.(platform.name);
        const platformNow = renewed?.platforms.get(platform.name);
        if (renewed !== undefined && platformNow?.clientSecret !== undefined) {
          this.setConfig(renewed);
          this.options.events?.info('auth server refused the secret; the secret file changed, asking again with the new one', {
            platform: platform.name,
          });
          return this.fetchAndStore(application, platformNow, target, true);
        }
      }
      if (error instanceof AuthServerFailure) {
        if (error.kind === 'rejected') this.rejected.add(platform.name);
        this.backoff.failed(platform.name, error);
      }
      throw error;
    }
    const authLatencyMs = this.now() - sentAt;
    this.rejected.delete(platform.name);
    this.backoff.succeeded(platform.name);
    const plan = planCache(fetched.expiresAt, sentAt, this.marginMs, this.config.noExpiryMs);
    const entry: CachedToken = {
      accessToken: fetched.accessToken,
      ...(fetched.expiresAt !== undefined ? { expiresAt: fetched.expiresAt } : {}),
      ...plan,
    };
    this.warnAboutLifetime(application, platform, fetched, entry, sentAt);
    this.memory.set(application, entry);
    if (target) await target.shared.set(target.key, entry, this.now()).catch(() => undefined);
    return { entry, cache: 'miss', authLatencyMs };
  }

  /** One line per token fetched, never per request. */
  private warnAboutLifetime(
    application: string,
    platform: PlatformCredentials,
    fetched: FetchedToken,
    entry: CachedToken,
    sentAt: number,
  ): void {
    const fields = { application, platform: platform.name };
    const events = this.options.events;
    if (fetched.cappedFromSeconds !== undefined) {
      events?.warn('token claims a validity of more than a day; treated as valid for a day', {
        ...fields,
        claimedSeconds: fetched.cappedFromSeconds,
      });
    }
    if (fetched.expiresAt === undefined) {
      events?.warn('token has neither expires_in nor exp; cached as if valid for cache.noExpirySeconds and served without expires_in', {
        ...fields,
        noExpirySeconds: this.config.noExpiryMs / 1000,
      });
    } else if (entry.short) {
      events?.warn('token lifetime is shorter than twice the cache margin; it is refreshed after half of it', {
        ...fields,
        lifetimeSeconds: Math.floor((fetched.expiresAt - sentAt) / 1000),
        marginSeconds: this.config.marginSeconds,
      });
    }
  }
}

/** The flight's outcome, or TIMED_OUT once `ms` have passed (the flight carries on and caches its token). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Client-facing details stay generic: the auth server's own message names its URL, which is kept server-side. */
function problemFor(kind: AuthFailureKind, reason: string, platform: PlatformCredentials, retryAfterSeconds: number): BrokerProblem {
  const where = `the auth server of the ${platform.name} platform`;
  switch (kind) {
    case 'rejected':
      return new BrokerProblem(
        'auth-server-rejected',
        `${where} rejected the broker's token request; the operator must check this platform's credentials`,
        reason,
      );
    case 'invalid-response':
      return new BrokerProblem('auth-server-invalid-response', `${where} answered without a usable token`, reason);
    case 'unavailable':
      return new BrokerProblem('auth-server-unavailable', `${where} is unavailable; retry later`, reason, retryAfterSeconds);
  }
}
