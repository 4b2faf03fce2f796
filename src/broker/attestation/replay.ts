import { hash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Remembers the ids of single-use tokens until they expire; a token whose id was seen is a replay. */
export interface ReplayGuard {
  /** True the first time `jti` is seen before `until` (epoch ms), false for a replay. */
  firstUse(jti: string, until: number): Promise<boolean>;
}

/** Above this many ids held, the expired ones are dropped (they expire within the tokens' lifetime anyway). */
const PRUNE_ABOVE = 100_000;

/** Ids (hashed) until when they are held, epoch ms; expired ones dropped once there are many. */
class HeldIds {
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Holds the id; false when it was already held and has not expired. */
  add(id: string, until: number): boolean {
    const now = this.now();
    const held = this.until.get(id);
    if (held !== undefined && held > now) return false;
    if (this.until.size >= PRUNE_ABOVE) this.dropExpired(now);
    this.until.set(id, until);
    return true;
  }

  delete(id: string): void {
    this.until.delete(id);
  }

  entries(): [string, number][] {
    return [...this.until];
  }

  get size(): number {
    return this.until.size;
  }

  private dropExpired(now: number): void {
    for (const [id, expiry] of this.until) if (expiry <= now) this.until.delete(id);
  }
}

function idOf(jti: string): string {
  return hash('sha256', jti, 'base64url');
}

/** In this instance's memory only (no Redis configured): a replay at another instance is not seen. */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly seen: HeldIds;

  constructor(now: () => number) {
    this.seen = new HeldIds(now);
  }

  firstUse(jti: string, until: number): Promise<boolean> {
    return Promise.resolve(this.seen.add(idOf(jti), until));
  }
}

export interface SharedReplayOptions {
  readonly redis: Redis;
  readonly keyPrefix: string;
  readonly redisUp: () => boolean;
  /** Registers what runs each time Redis takes commands again. */
  readonly whenRedisUp: (listener: () => void) => void;
  readonly now: () => number;
}

/**
 * In this instance's memory and in Redis, shared by every instance (SET NX until the token expires). The instance's
 * own memory decides first, so it refuses a replay it has seen itself whatever Redis does (down, flushed, failed
 * over to a replica that missed the write); Redis adds the replays other instances saw. An id seen while Redis is
 * down or failing is accepted (a genuine first use is never refused for an outage) and written to Redis once it takes
 * commands again, so the other instances refuse it from then on.
 */
export class SharedReplayGuard implements ReplayGuard {
  private readonly seen: HeldIds;
  /** Ids seen while Redis was down, to be written when it is back. */
  private readonly unwritten: HeldIds;

  constructor(private readonly options: SharedReplayOptions) {
    this.seen = new HeldIds(options.now);
    this.unwritten = new HeldIds(options.now);
    options.whenRedisUp(() => void this.writeUnwritten());
  }

  async firstUse(jti: string, until: number): Promise<boolean> {
    const id = idOf(jti);
    if (!this.seen.add(id, until)) return false;
    if (!this.options.redisUp()) {
      this.unwritten.add(id, until);
      return true;
    }
    try {
      return (await this.write(id, until)) !== false;
    } catch {
      this.unwritten.add(id, until);
      return true;
    }
  }

  /** How many ids wait for Redis (for tests and the readiness body). */
  get unwrittenCount(): number {
    return this.unwritten.size;
  }

  /** SET NX with what is left of the id's life: false when another instance had it; undefined when it has expired. */
  private async write(id: string, until: number): Promise<boolean | undefined> {
    const ttlMs = Math.ceil(until - this.options.now());
    if (ttlMs <= 0) return undefined;
    const set = await this.options.redis.set(`${this.options.keyPrefix}jti:${id}`, '1', 'PX', ttlMs, 'NX');
    return set === 'OK';
  }

  private async writeUnwritten(): Promise<void> {
    for (const [id, until] of this.unwritten.entries()) {
      try {
        await this.write(id, until);
        this.unwritten.delete(id);
      } catch {
        return; // down again: the rest waits for the next time it is back
      }
    }
  }
}
