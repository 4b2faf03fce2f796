import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClientRates } from '../../../src/broker/http/client-rates.js';

const WINDOW_MS = 60_000;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-03-01T12:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

/** rate-limiter-flexible's memory store, which the broker used before and still uses as Redis's insurance. */
async function libraryTake(limiter: RateLimiterMemory, client: string): Promise<number | undefined> {
  try {
    await limiter.consume(client);
    return undefined;
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    return rejection.msBeforeNext;
  }
}

describe('ClientRates', () => {
  it('admits a client up to its limit in a window, refuses it until the window ends, then opens a new one', () => {
    const rates = new ClientRates(3, WINDOW_MS);
    expect([rates.take('a'), rates.take('a'), rates.take('a')]).toEqual([undefined, undefined, undefined]);
    vi.advanceTimersByTime(20_000);
    expect(rates.take('a')).toBe(40_000);
    expect(rates.take('b')).toBeUndefined(); // each client counts on its own
    vi.advanceTimersByTime(39_999);
    expect(rates.take('a')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(rates.take('a')).toBeUndefined();
  });

  it('counts as rate-limiter-flexible’s memory store does, refused requests included', async () => {
    const limit = 4;
    const rates = new ClientRates(limit, WINDOW_MS);
    const library = new RateLimiterMemory({ points: limit, duration: WINDOW_MS / 1000 });
    // [ms to wait before the request, client]: bursts, refusals, a window ending mid-burst, two clients interleaved.
    // biome-ignore format: a table
    const steps: readonly (readonly [number, string])[] = [
      [0, 'a'], [0, 'a'], [1_000, 'b'], [0, 'a'], [5_000, 'a'], [0, 'a'], [0, 'a'], [10_000, 'b'],
      [43_999, 'a'], [1, 'a'], [0, 'a'], [30_000, 'b'], [0, 'b'], [0, 'b'], [0, 'b'], [0, 'b'], [29_999, 'a'],
      [1, 'a'], [90_000, 'a'], [0, 'b'],
    ];
    for (const [waitMs, client] of steps) {
      vi.advanceTimersByTime(waitMs);
      const ours = rates.take(client);
      const theirs = await libraryTake(library, client);
      expect([Date.now(), client, ours]).toEqual([Date.now(), client, theirs === undefined ? undefined : Math.max(1, theirs)]);
    }
  });

  it('drops a client’s window when it ends, so the map holds only the last window’s clients', () => {
    const rates = new ClientRates(10, WINDOW_MS);
    for (let client = 0; client < 200; client++) rates.take(`10.0.${client >> 8}.${client & 255}`);
    expect(rates.size).toBe(200);
    vi.advanceTimersByTime(WINDOW_MS / 2);
    rates.take('10.9.9.9');
    vi.advanceTimersByTime(WINDOW_MS / 2);
    expect(rates.size).toBe(1);
    vi.advanceTimersByTime(WINDOW_MS / 2);
    expect(rates.size).toBe(0);
  });
});
