import { HttpAnswer } from './http.js';
import type { RateLimitHeaders } from './types.js';

const WINDOW_MS = 1000;

/**
 * Milliseconds as whole seconds, rounded up, at least 1. The milliseconds are rounded first: `t + 1000 - t` is not
 * always 1000 in floating point, and 1000.0000001 ms must not read as 2 s.
 */
function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(Math.round(ms) / 1000));
}

/** A decision on one request: let through, or refused with the whole seconds to wait. */
type Decision = { readonly allowed: true; readonly remaining: number } | { readonly allowed: false; readonly retryAfterSeconds: number };

/**
 * A real rate limit, counted the way Django REST Framework's throttles count (`SimpleRateThrottle`): a log of the
 * times of the requests let through; a request finding `limit` of them in the last second is refused (and not
 * logged), with a Retry-After of the time until the oldest leaves the window, in whole seconds rounded up.
 */
export class SlidingWindowThrottle {
  /** Times of the requests let through in the window, oldest first. */
  private readonly history: number[] = [];

  decide(limit: number, now: number): Decision {
    while (this.history.length > 0 && (this.history[0] as number) <= now - WINDOW_MS) this.history.shift();
    if (this.history.length >= limit) {
      const waitMs = (WINDOW_MS - (now - (this.history[0] as number))) / (limit - this.history.length + 1);
      return { allowed: false, retryAfterSeconds: wholeSeconds(waitMs) };
    }
    this.history.push(now);
    return { allowed: true, remaining: limit - this.history.length };
  }

  /** Seconds (rounded up) until the oldest request leaves the window: when the budget grows again. */
  secondsToNextSlot(now: number): number {
    const oldest = this.history[0];
    return oldest === undefined ? 0 : wholeSeconds(oldest + WINDOW_MS - now);
  }

  /** Seconds (rounded up) until the window is empty: when the whole budget is back. */
  secondsToEmpty(now: number): number {
    const newest = this.history.at(-1);
    return newest === undefined ? 0 : wholeSeconds(newest + WINDOW_MS - now);
  }
}

/** How each `--rate-limit-headers` choice announces the limit: the IETF httpapi draft's fields, or the X- ones. */
const ANNOUNCE: Readonly<
  Record<RateLimitHeaders, (limit: number, remaining: number, throttle: SlidingWindowThrottle, now: number) => Record<string, string>>
> = {
  none: () => ({}),
  draft: (limit, remaining, throttle, now) => ({
    'RateLimit-Policy': `"default";q=${limit};w=${WINDOW_MS / 1000}`,
    RateLimit: `"default";r=${remaining};t=${throttle.secondsToNextSlot(now)}`,
  }),
  x: (limit, remaining, throttle, now) => ({
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(throttle.secondsToEmpty(now)),
  }),
};

/**
 * Applies the limit to a metric request at `now` (a monotonic clock in ms): throws the 429 (with Retry-After, and the
 * announcing headers) or returns the headers for the answer.
 */
export function throttleRequest(
  throttle: SlidingWindowThrottle,
  rule: { readonly perSecond: number; readonly headers?: RateLimitHeaders },
  now: number,
): Record<string, string> {
  const decision = throttle.decide(rule.perSecond, now);
  const announce = ANNOUNCE[rule.headers ?? 'none'];
  if (decision.allowed) return announce(rule.perSecond, decision.remaining, throttle, now);
  const seconds = decision.retryAfterSeconds;
  throw new HttpAnswer(
    429,
    { detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.` },
    { 'Retry-After': String(seconds), ...announce(rule.perSecond, 0, throttle, now) },
  );
}
