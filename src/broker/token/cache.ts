import { createHash, randomUUID } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { errnoCode } from '../../errors.js';
import type { RedisSettings } from '../config/config.js';
import type { CachePlan } from './expiry.js';

/** A cached token and the points of its life (see `planCache`). Times are epoch milliseconds. */
export interface CachedToken extends CachePlan {
  readonly accessToken: string;
  /** When the token stops being valid (the earlier of expires_in and exp); absent when it carries neither. */
  readonly expiresAt?: number;
}

const cachedTokenSchema = z.strictObject({
  accessToken: z.string().min(1),
  expiresAt: z.number().int().optional(),
  refreshAheadAt: z.number().int(),
  refreshAt: z.number().int(),
  discardAt: z.number().int(),
  short: z.boolean(),
});

/** One entry per key; an entry past its `discardAt` is dropped when read (an expired token is never served). */
export class MemoryTokenCache {
  private readonly entries = new Map<string, CachedToken>();

  get(key: string, now: number): CachedToken | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.discardAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, entry: CachedToken): void {
    this.entries.set(key, entry);
  }

  /** Keeps the entry only if it lasts longer than the one held (a token read from Redis may be older). */
  offer(key: string, entry: CachedToken, now: number): void {
    const held = this.get(key, now);
    if (held === undefined || entry.discardAt > held.discardAt) this.entries.set(key, entry);
  }

  get size(): number {
    return this.entries.size;
  }
}

export type SharedCacheStatus = 'up' | 'down';

/** The cross-instance cache (Redis). Every method may throw when the store is down; callers fall back to memory. */
export interface SharedTokenCache {
  status(): SharedCacheStatus;
  get(key: string): Promise<CachedToken | undefined>;
  /** Stores until the token's discard point, so a stale token stays available for stale-while-failing. */
  set(key: string, entry: CachedToken, now: number): Promise<void>;
  /** Takes the key's refresh lock for ttlMs; returns the lock's owner token, or undefined when someone holds it. */
  tryLock(key: string, ttlMs: number): Promise<string | undefined>;
  unlock(key: string, owner: string): Promise<void>;
  /** Keeps the lock (if still ours) for ttlMs more: after a failed call, other instances then do not call either. */
  extendLock(key: string, owner: string, ttlMs: number): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface RedisTokenCacheOptions {
  readonly redis: RedisSettings;
  readonly keyPrefix: string;
  /** Called on every up/down transition, with a reason for "down" (never a secret: the URL's password is not in it). */
  readonly onStatusChange?: (status: SharedCacheStatus, reason?: string) => void;
  /** A Redis command that takes longer fails, and the broker carries on from memory. */
  readonly commandTimeoutMs?: number;
  /** A condition worth a warning that is not an outage (a password the server does not need). */
  readonly onWarning?: (message: string) => void;
  /** How often a write is tried to tell whether Redis takes commands (a replica after a failover answers READONLY). */
  readonly probeIntervalMs?: number;
}

// Deletes the lock only if we still own it, so a lock that expired and was taken by another instance survives.
const UNLOCK_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const EXTEND_LOCK_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/** ioredis options for the configured Redis: one URL or Sentinel, a password, TLS files. */
export function redisClientOptions(
  settings: RedisSettings,
  commandTimeoutMs: number,
): { url?: string; options: RedisOptions; auth?: { username?: string; password: string } } {
  const { url, auth } = withoutCredentials(settings.url, settings.password);
  const tls = settings.tls === undefined && !settings.url?.startsWith('rediss:') ? undefined : { ...settings.tls };
  const options: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // The write probe below tells whether Redis takes commands; the INFO-based ready check would only print a
    // plain-text warning on stderr where INFO is not permitted (NOPERM).
    enableReadyCheck: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2000,
    // Keep trying in the background (0.1 s, 0.2 s, ... up to 2 s apart): the broker serves from memory meanwhile.
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...(tls !== undefined ? { tls } : {}),
  };
  if (settings.sentinels !== undefined) {
    return {
      options: {
        ...options,
        sentinels: settings.sentinels.map(({ host, port }) => ({ host, port })),
        ...(settings.name !== undefined ? { name: settings.name } : {}),
        sentinelRetryStrategy: (times) => Math.min(times * 100, 2000),
        ...(tls !== undefined ? { enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
        // After a failover the old master (now a replica) answers READONLY: reconnect to the new master.
        reconnectOnError: (error) => error.message.startsWith('READONLY'),
      },
      ...(auth !== undefined ? { auth } : {}),
    };
  }
  return { ...(url !== undefined ? { url } : {}), options, ...(auth !== undefined ? { auth } : {}) };
}

/**
 * The URL without its user and password, and the credentials to send with AUTH (the configured password wins).
 * The broker sends AUTH itself rather than through ioredis, which reports an unneeded password with console.warn:
 * a plain-text line amid the JSON log.
 */
function withoutCredentials(
  url: string | undefined,
  password: string | undefined,
): { url?: string; auth?: { username?: string; password: string } } {
  if (url === undefined) return password === undefined ? {} : { auth: { password } };
  const parsed = new URL(url);
  const username = decodeURIComponent(parsed.username);
  const fromUrl = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  const secret = password ?? (fromUrl === '' ? undefined : fromUrl);
  return {
    url: parsed.toString(),
    ...(secret !== undefined ? { auth: { ...(username !== '' ? { username } : {}), password: secret } } : {}),
  };
}

/**
 * Redis as the shared cache (ioredis). Fails fast when Redis is down (no offline queue) and keeps reconnecting.
 * "Up" means Redis takes commands, not only that a connection is open: a command that fails (CLUSTERDOWN, READONLY,
 * NOPERM, a wrong password) marks it down until a write succeeds again.
 */
export class RedisTokenCache implements SharedTokenCache {
  private readonly redis: Redis;
  // 'connecting' until the first outcome, so a Redis that is down at start is reported too.
  private current: SharedCacheStatus | 'connecting' = 'connecting';
  /** Set by close(): the connection ending then is not an outage, and is not reported as one. */
  private closing = false;
  private readonly probeTimer: NodeJS.Timeout;
  private readonly upListeners: (() => void)[] = [];

  private readonly auth: { username?: string; password: string } | undefined;
  private authenticated = false;

  constructor(private readonly options: RedisTokenCacheOptions) {
    const { url, options: clientOptions, auth } = redisClientOptions(options.redis, options.commandTimeoutMs ?? 500);
    this.auth = auth;
    this.redis = url === undefined ? new Redis(clientOptions) : new Redis(url, clientOptions);
    this.redis.on('ready', () => void this.authenticateAndProbe());
    this.redis.on('error', (error: Error) => this.transition('down', redisErrorReason(error)));
    this.redis.on('close', () => this.transition('down', 'connection closed'));
    this.probeTimer = setInterval(() => void this.probe(), options.probeIntervalMs ?? 2000);
    this.probeTimer.unref();
  }

  /**
   * Starts connecting and returns at once: a Redis that is down or hangs at start is not fatal, and start-up does not
   * wait for it (the status says so, and reconnecting continues in the background).
   */
  connect(): void {
    this.redis.connect().catch((error: unknown) => this.transition('down', redisErrorReason(error)));
  }

  /** On each new connection: AUTH when a password is configured, then the write probe. */
  private async authenticateAndProbe(): Promise<void> {
    this.authenticated = this.auth === undefined;
    if (this.auth !== undefined) {
      const { username, password } = this.auth;
      try {
        await (username === undefined ? this.redis.auth(password) : this.redis.auth(username, password));
      } catch (error) {
        const reason = redisErrorReason(error);
        // A Redis without a password refuses AUTH but takes commands: say so once, as a warning, and carry on.
        if (!/without any password configured|no password is set/i.test(error instanceof Error ? error.message : '')) {
          this.transition('down', reason);
          return;
        }
        this.options.onWarning?.('a Redis password is configured, but this Redis does not require a password');
      }
      this.authenticated = true;
    }
    await this.probe();
  }

  /** One write: Redis is up when it succeeds. */
  private async probe(): Promise<void> {
    if (this.closing || this.redis.status !== 'ready' || !this.authenticated) return;
    try {
      await this.redis.set(`${this.options.keyPrefix}probe`, '1', 'PX', 10_000);
      this.transition('up');
    } catch (error) {
      this.transition('down', redisErrorReason(error));
    }
  }

  /** Runs a command; a failing one marks Redis down (a lost connection is reported by the events). */
  private async command<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      this.transition('down', redisErrorReason(error));
      throw error;
    }
  }

  private transition(status: SharedCacheStatus, reason?: string): void {
    if (this.closing || status === this.current) return;
    this.current = status;
    this.options.onStatusChange?.(status, reason);
    if (status === 'up') for (const listener of this.upListeners) listener();
  }

  /** Runs `listener` each time Redis takes commands again (single-use ids seen meanwhile are written then). */
  onUp(listener: () => void): void {
    this.upListeners.push(listener);
  }

  status(): SharedCacheStatus {
    return this.current === 'up' ? 'up' : 'down';
  }

  /** The client, for what shares Redis with the cache (the rate limit). */
  get client(): Redis {
    return this.redis;
  }

  // `token2`: the entry's shape changed (refresh-ahead and discard points); older instances keep their own keys.
  private key(kind: 'token2' | 'lock', key: string): string {
    return `${this.options.keyPrefix}${kind}:${key}`;
  }

  async get(key: string): Promise<CachedToken | undefined> {
    const text = await this.command(() => this.redis.get(this.key('token2', key)));
    if (text === null) return undefined;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return undefined; // someone else's value under our prefix: treat as a miss, it is overwritten on refresh
    }
    const parsed = cachedTokenSchema.safeParse(json);
    return parsed.success ? parsed.data : undefined;
  }

  async set(key: string, entry: CachedToken, now: number): Promise<void> {
    const ttlMs = entry.discardAt - now;
    if (ttlMs <= 0) return;
    await this.command(() => this.redis.set(this.key('token2', key), JSON.stringify(entry), 'PX', ttlMs));
  }

  async tryLock(key: string, ttlMs: number): Promise<string | undefined> {
    const owner = randomUUID();
    const result = await this.command(() => this.redis.set(this.key('lock', key), owner, 'PX', Math.max(1, Math.round(ttlMs)), 'NX'));
    return result === 'OK' ? owner : undefined;
  }

  async unlock(key: string, owner: string): Promise<void> {
    await this.command(() => this.redis.eval(UNLOCK_SCRIPT, 1, this.key('lock', key), owner));
  }

  async extendLock(key: string, owner: string, ttlMs: number): Promise<void> {
    await this.command(() => this.redis.eval(EXTEND_LOCK_SCRIPT, 1, this.key('lock', key), owner, String(Math.max(1, Math.round(ttlMs)))));
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.probeTimer);
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

/** The server's error code (READONLY, NOPERM, WRONGPASS, CLUSTERDOWN) or the network's (ECONNREFUSED); cut short. */
function redisErrorReason(error: unknown): string {
  if (error instanceof Error) {
    const code = errnoCode(error);
    if (code !== undefined) return code;
    const serverCode = /^([A-Z][A-Z_-]{2,})\b/.exec(error.message)?.[1];
    return serverCode ?? error.message.slice(0, 200);
  }
  return String(error);
}

/**
 * The shared-cache key of an application: the application package plus a fingerprint of the credential set (auth URL,
 * client id, scope; never the secret), so instances running a changed config never hand out each other's tokens.
 */
export function sharedCacheKey(application: string, platform: { authUrl: string; clientId?: string; scope?: string }): string {
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([platform.authUrl, platform.clientId ?? '', platform.scope ?? '']))
    .digest('hex')
    .slice(0, 12);
  return `${application}:${fingerprint}`;
}
