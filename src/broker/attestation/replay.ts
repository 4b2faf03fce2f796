import { hash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Remembers the ids of single-use tokens until they expire; a token whose id was seen is a replay. */
export interface ReplayGuard {
  /** True the first time `jti` is seen before `until` (epoch ms), false for a replay. */
  firstUse(jti: string, until: number): Promise<boolean>;
}

/** Above this many ids remembered, the expired ones are dropped (they expire within the tokens' lifetime anyway). */
const PRUNE_ABOVE = 100_000;

/** In this instance's memory: a replay at another instance is not seen (see RedisReplayGuard). */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  firstUse(jti: string, until: number): Promise<boolean> {
    const now = this.now();
    const key = hash('sha256', jti, 'base64url');
    const held = this.seen.get(key);
    if (held !== undefined && held > now) return Promise.resolve(false);
    if (this.seen.size >= PRUNE_ABOVE) for (const [id, expiry] of this.seen) if (expiry <= now) this.seen.delete(id);
    this.seen.set(key, until);
    return Promise.resolve(true);
  }
}

/**
 * In Redis, shared by every instance (SET NX with the token's remaining life), so a token used at one instance is
 * refused at another. While Redis is down or a command fails, this instance's memory stands in: a replay is then
 * caught only where the token was first seen, and never turns a genuine first use into a refusal.
 */
export class RedisReplayGuard implements ReplayGuard {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly redisUp: () => boolean,
    private readonly now: () => number,
    private readonly fallback: ReplayGuard,
  ) {}

  async firstUse(jti: string, until: number): Promise<boolean> {
    if (!this.redisUp()) return this.fallback.firstUse(jti, until);
    const ttlMs = Math.max(1, Math.ceil(until - this.now()));
    try {
      const set = await this.redis.set(`${this.keyPrefix}jti:${hash('sha256', jti, 'base64url')}`, '1', 'PX', ttlMs, 'NX');
      return set === 'OK';
    } catch {
      return this.fallback.firstUse(jti, until);
    }
  }
}
