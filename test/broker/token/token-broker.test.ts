import { describe, expect, it } from 'vitest';
import type { CachedToken, SharedTokenCache } from '../../../src/broker/token/cache.js';
import { resolveBrokerConfig, type BrokerConfig, type PlatformCredentials } from '../../../src/broker/config/config.js';
import { BrokerProblem } from '../../../src/broker/problem.js';
import { TokenBroker, parseApplicationPackage } from '../../../src/broker/token/token-broker.js';
import { AuthServerFailure, type FetchedToken, type TokenSource } from '../../../src/broker/token/token-source.js';

const APP = 'com.acme.shop';

function config(marginSeconds = 60, authTimeoutSeconds = 10): BrokerConfig {
  return resolveBrokerConfig(
    {
      authUrl: 'https://auth.example.com',
      platforms: { android: { clientId: 'id', clientSecretEnv: 'S' }, ios: { clientId: 'ios', clientSecretEnv: 'UNSET' } },
      applications: { [APP]: 'android', 'com.acme.ShopApp': 'ios' },
      cache: { marginSeconds },
      authTimeoutSeconds,
    },
    { env: { S: 'secret' } },
  );
}

class Clock {
  constructor(public ms = 1_000_000) {}
  now = (): number => this.ms;
}

/** A TokenSource whose answers the test scripts; counts calls. */
class ScriptedSource implements TokenSource {
  calls = 0;
  next: (call: number) => Promise<FetchedToken> | FetchedToken;
  constructor(
    private readonly clock: Clock,
    ttlSeconds = 3600,
  ) {
    this.next = (call) => ({ accessToken: `token-${call}`, expiresAt: this.clock.ms + ttlSeconds * 1000 });
  }
  async fetch(_platform: PlatformCredentials): Promise<FetchedToken> {
    this.calls += 1;
    return this.next(this.calls);
  }
  async close(): Promise<void> {}
  /** Holds every answer until the returned function is called, so that concurrent requests pile up. */
  hold(): () => void {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const plain = this.next;
    this.next = async (call) => {
      await gate;
      return plain(call);
    };
    return release;
  }
}

function problemOf(promise: Promise<unknown>): Promise<BrokerProblem> {
  return promise.then(
    () => {
      throw new Error('expected a problem');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(BrokerProblem);
      return error as BrokerProblem;
    },
  );
}

describe('TokenBroker (memory cache)', () => {
  it('fetches on a miss, then serves the cached token without the auth server', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const broker = new TokenBroker({ config: config(), source, now: clock.now });
    const first = await broker.token(APP);
    expect(first).toMatchObject({ accessToken: 'token-1', cache: 'miss' });
    clock.ms += 1000;
    expect(await broker.token(APP)).toMatchObject({ accessToken: 'token-1', cache: 'hit', expiresAt: first.expiresAt });
    expect(source.calls).toBe(1);
  });

  it('answers a memory hit synchronously (cachedToken), and nothing that needs the auth server', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock, 600);
    const broker = new TokenBroker({ config: config(60), source, now: clock.now });
    expect(broker.cachedToken(APP)).toBeUndefined();
    expect(source.calls).toBe(0); // the synchronous path never fetches
    const first = await broker.token(APP);
    expect(broker.cachedToken(APP)).toEqual({ accessToken: 'token-1', expiresAt: first.expiresAt, cache: 'hit' });
    clock.ms += 540_000; // the margin reached: the caller must take the asynchronous path
    expect(broker.cachedToken(APP)).toBeUndefined();
    expect(() => broker.cachedToken('com.unknown.app')).toThrow(BrokerProblem);
    expect(() => broker.cachedToken('com.acme.ShopApp')).toThrow(/no usable credentials/);
    expect(source.calls).toBe(1);
  });

  it('refreshes ahead: within twice the margin the cached token is served at once and one background refresh starts', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock, 600);
    const broker = new TokenBroker({ config: config(60), source, now: clock.now });
    await broker.token(APP);
    clock.ms += 479_999;
    expect(broker.cachedToken(APP)).toMatchObject({ accessToken: 'token-1', cache: 'hit' });
    expect(source.calls).toBe(1);
    const release = source.hold();
    clock.ms += 1; // 120 s left: twice the margin
    for (let i = 0; i < 20; i++) expect(broker.cachedToken(APP)).toMatchObject({ accessToken: 'token-1', cache: 'hit' });
    expect(source.calls).toBe(2); // one background refresh for twenty requests
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(broker.cachedToken(APP)).toMatchObject({ accessToken: 'token-2', cache: 'hit' });
  });

  it('caches a token shorter than twice the margin for half its validity, refreshing it ahead until three quarters', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock, 30);
    const warnings: string[] = [];
    const broker = new TokenBroker({
      config: config(60),
      source,
      now: clock.now,
      events: { warn: (m) => warnings.push(m), info: () => {} },
    });
    await broker.token(APP);
    clock.ms += 14_999;
    for (let i = 0; i < 100; i++) expect(broker.cachedToken(APP)?.cache).toBe('hit');
    expect(source.calls).toBe(1);
    expect(warnings.filter((warning) => /shorter than twice the cache margin/.test(warning))).toHaveLength(1);
  });

  it('makes one auth request for 200 concurrent misses', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const release = source.hold();
    const broker = new TokenBroker({ config: config(), source, now: clock.now });
    const all = Promise.all(Array.from({ length: 200 }, () => broker.token(APP)));
    release();
    const tokens = await all;
    expect(source.calls).toBe(1);
    expect(new Set(tokens.map((token) => token.accessToken))).toEqual(new Set(['token-1']));
    expect(tokens.filter((token) => token.cache === 'miss')).toHaveLength(1);
  });

  it('backs off after a failure: no call and a 503 with the remaining Retry-After, then asks again', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const plain = source.next;
    source.next = (call) => {
      if (call <= 2) throw new AuthServerFailure('unavailable', 'HTTP 503', call === 1 ? undefined : 20_000);
      return plain(call);
    };
    const broker = new TokenBroker({ config: config(), source, now: clock.now });
    expect(await problemOf(broker.token(APP))).toMatchObject({ status: 503, retryAfterSeconds: 1 });
    expect(await problemOf(broker.token(APP))).toMatchObject({ status: 503, retryAfterSeconds: 1 });
    expect(source.calls).toBe(1);
    clock.ms += 1000;
    // The second failure carries Retry-After: 20, which beats the doubled back-off.
    expect(await problemOf(broker.token(APP))).toMatchObject({ status: 503, retryAfterSeconds: 20 });
    clock.ms += 15_000;
    expect(await problemOf(broker.token(APP))).toMatchObject({ status: 503, retryAfterSeconds: 5 });
    expect(source.calls).toBe(2);
    clock.ms += 5000;
    expect(await broker.token(APP)).toMatchObject({ accessToken: 'token-3', cache: 'miss' });
  });

  it('maps failures: rejected → 502, invalid response → 502, unavailable → 503; details never name the auth URL', async () => {
    const clock = new Clock();
    const cases = [
      [new AuthServerFailure('rejected', 'invalid_client from https://auth.example.com'), 502, 'auth-server-rejected'],
      [new AuthServerFailure('invalid-response', 'not JSON from https://auth.example.com'), 502, 'auth-server-invalid-response'],
      [new AuthServerFailure('unavailable', 'ECONNREFUSED https://auth.example.com'), 503, 'auth-server-unavailable'],
    ] as const;
    for (const [failure, status, kind] of cases) {
      const source = new ScriptedSource(clock);
      source.next = () => {
        throw failure;
      };
      const broker = new TokenBroker({ config: config(), source, now: clock.now });
      const problem = await problemOf(broker.token(APP));
      expect(problem).toMatchObject({ status, kind, internalReason: failure.message });
      expect(problem.detail).not.toContain('auth.example.com');
      // During the back-off the same answer comes without a call.
      expect(await problemOf(broker.token(APP))).toMatchObject({ status, kind });
      expect(source.calls).toBe(1);
    }
  });

  it('caches a token without expiry information for cache.noExpirySeconds, with one warning per token', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    source.next = (call) => ({ accessToken: `opaque-${call}` });
    const warnings: string[] = [];
    const broker = new TokenBroker({ config: config(), source, now: clock.now, events: { warn: (m) => warnings.push(m), info: () => {} } });
    expect(await broker.token(APP)).toEqual({ accessToken: 'opaque-1', cache: 'miss', authLatencyMs: 0 });
    for (let i = 0; i < 50; i++) expect(await broker.token(APP)).toEqual({ accessToken: 'opaque-1', cache: 'hit' });
    expect(source.calls).toBe(1);
    expect(warnings.filter((warning) => /neither expires_in nor exp/.test(warning))).toHaveLength(1);
    clock.ms += 60_000; // the assumed validity is over
    expect(await broker.token(APP)).toMatchObject({ accessToken: 'opaque-2', cache: 'miss' });
  });

  it('serves a still-valid token past its refresh point when the auth server is down, but not a rejected or expired one', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock, 600);
    const broker = new TokenBroker({ config: config(60), source, now: clock.now });
    const first = await broker.token(APP);
    const plain = source.next;
    source.next = () => {
      throw new AuthServerFailure('unavailable', 'timed out');
    };
    clock.ms += 570_000; // in the margin: 30 s of validity left
    expect(await broker.token(APP)).toEqual({ accessToken: 'token-1', cache: 'stale', expiresAt: first.expiresAt });
    // While the auth server is failing, requests get the stale token at once; one background call per back-off.
    const callsAfterFailure = source.calls;
    for (let i = 0; i < 10; i++) expect(broker.cachedToken(APP)).toMatchObject({ accessToken: 'token-1', cache: 'stale' });
    expect(source.calls).toBe(callsAfterFailure);
    clock.ms += 1000;
    source.next = () => {
      throw new AuthServerFailure('rejected', 'invalid_client');
    };
    expect(broker.cachedToken(APP)).toMatchObject({ cache: 'stale' }); // and a background probe now
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.calls).toBe(callsAfterFailure + 1);
    expect((await problemOf(broker.token(APP))).status).toBe(502);
    source.next = () => {
      throw new AuthServerFailure('unavailable', 'timed out');
    };
    clock.ms += 30_000; // expired now
    expect((await problemOf(broker.token(APP))).status).toBe(503);
    source.next = plain;
    clock.ms += 30_000; // past the back-off
    expect((await broker.token(APP)).cache).toBe('miss');
  });

  it('answers 400 for an unknown application and 401 for a platform without usable credentials', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const broker = new TokenBroker({ config: config(), source, now: clock.now });
    expect(await problemOf(broker.token('com.other'))).toMatchObject({ status: 400, kind: 'unknown-application' });
    const unauthorized = await problemOf(broker.token('com.acme.ShopApp'));
    expect(unauthorized).toMatchObject({ status: 401, kind: 'credentials-not-configured' });
    expect(unauthorized.detail).not.toContain('UNSET'); // env var names stay server-side
    expect(source.calls).toBe(0);
  });
});

describe('parseApplicationPackage', () => {
  it('accepts one well-formed value and refuses the rest with the 400 problems', () => {
    expect(parseApplicationPackage('com.acme.shop')).toBe('com.acme.shop');
    const kind = (value: unknown): string => {
      try {
        parseApplicationPackage(value);
        return 'ok';
      } catch (error) {
        return (error as BrokerProblem).kind;
      }
    };
    expect(kind(undefined)).toBe('missing-application-package');
    expect(kind('')).toBe('invalid-application-package');
    expect(kind(['a', 'b'])).toBe('invalid-application-package');
    expect(kind('x'.repeat(256))).toBe('invalid-application-package');
    expect(kind('com.acme\u0000shop')).toBe('invalid-application-package');
  });
});

/** A shared cache in memory, to test the cross-instance lock logic without Redis. */
class FakeShared implements SharedTokenCache {
  entries = new Map<string, CachedToken>();
  locks = new Map<string, string>();
  up = true;
  failing = false;
  private serial = 0;
  status() {
    return this.up ? ('up' as const) : ('down' as const);
  }
  private check(): void {
    if (this.failing) throw new Error('redis exploded');
  }
  async get(key: string) {
    this.check();
    return this.entries.get(key);
  }
  async set(key: string, entry: CachedToken) {
    this.check();
    this.entries.set(key, entry);
  }
  async tryLock(key: string) {
    this.check();
    if (this.locks.has(key)) return undefined;
    const owner = `owner-${++this.serial}`;
    this.locks.set(key, owner);
    return owner;
  }
  async unlock(key: string, owner: string) {
    if (this.locks.get(key) === owner) this.locks.delete(key);
  }
  async extendLock() {}
  async ping() {
    return this.up;
  }
  async close() {}
}

describe('TokenBroker (shared cache)', () => {
  it("two instances share one auth request, the loser waiting for the winner's token", async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const release = source.hold();
    const shared = new FakeShared();
    const a = new TokenBroker({ config: config(), source, shared, now: clock.now, lockPollMs: 1 });
    const b = new TokenBroker({ config: config(), source, shared, now: clock.now, lockPollMs: 1 });
    const all = Promise.all([...Array.from({ length: 50 }, () => a.token(APP)), ...Array.from({ length: 50 }, () => b.token(APP))]);
    setTimeout(release, 20);
    const tokens = await all;
    expect(source.calls).toBe(1);
    expect(new Set(tokens.map((token) => token.accessToken)).size).toBe(1);
    expect(tokens.some((token) => token.cache === 'shared')).toBe(true);
    expect(shared.locks.size).toBe(0);
  });

  it('a lock loser never calls the auth server itself: past the auth timeout it answers 503', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const shared = new FakeShared();
    shared.tryLock = async () => undefined; // someone else holds every lock and never finishes
    const broker = new TokenBroker({ config: config(60, 0.05), source, shared, lockPollMs: 5 });
    const startedAt = Date.now();
    expect(await problemOf(broker.token(APP))).toMatchObject({ status: 503, kind: 'auth-server-unavailable' });
    expect(Date.now() - startedAt).toBeLessThan(10_000); // the 0.05 s auth timeout, not a wait for a lock never released
    expect(source.calls).toBe(0);
  });

  it('carries on from memory and the auth server when the shared cache fails', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const shared = new FakeShared();
    shared.failing = true;
    const broker = new TokenBroker({ config: config(), source, shared, now: clock.now });
    expect((await broker.token(APP)).cache).toBe('miss');
    expect((await broker.token(APP)).cache).toBe('hit');
    shared.up = false;
    clock.ms += 3600_000;
    expect(await broker.token(APP)).toMatchObject({ accessToken: 'token-2', cache: 'miss' });
  });
});

describe('a rotated secret', () => {
  it('asks once more with the secret read again when the auth server refuses the old one, and reports the platform state', async () => {
    const clock = new Clock();
    const source = new ScriptedSource(clock);
    const secrets: string[] = [];
    source.fetch = async (platform: PlatformCredentials) => {
      source.calls += 1;
      secrets.push(platform.clientSecret ?? '');
      if (platform.clientSecret !== 'new-secret') throw new AuthServerFailure('rejected', 'auth server answered HTTP 401 (invalid_client)');
      return { accessToken: `token-${source.calls}`, expiresAt: clock.ms + 3_600_000 };
    };
    const old = config();
    const reread: { renewed?: BrokerConfig } = {};
    const broker = new TokenBroker({ config: old, source, now: clock.now, rereadSecret: () => reread.renewed });
    expect((await problemOf(broker.token(APP))).kind).toBe('auth-server-rejected');
    expect(broker.platformStates()).toEqual(
      new Map([
        ['android', 'rejected'],
        ['ios', 'unset'],
      ]),
    );
    const android = old.platforms.get('android')!;
    reread.renewed = { ...old, platforms: new Map([...old.platforms, ['android', { ...android, clientSecret: 'new-secret' }]]) };
    clock.ms += 60_000; // past the back-off
    expect((await broker.token(APP)).accessToken).toBe('token-3');
    expect(secrets).toEqual(['secret', 'secret', 'new-secret']);
    expect(broker.platformStates().get('android')).toBe('ok');
  });
});
