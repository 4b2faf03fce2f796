/**
 * The broker's time arithmetic, in plain epoch milliseconds, bounded so that no answer of the auth server can make
 * an invalid date, a NaN `expires_in` or a cache entry that is never fresh and never dropped.
 */

/** Longer validities are cut to this (with a warning): a day is far more than any SDK token needs. */
export const MAX_VALIDITY_MS = 24 * 60 * 60 * 1000;
/** A token with less than this left is never served: its `expires_in` would be 0. */
export const MIN_SERVABLE_MS = 1000;

export type TokenExpiry =
  | { readonly kind: 'none' }
  | { readonly kind: 'valid'; readonly expiresAt: number; readonly cappedFromSeconds?: number }
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * When a token stops being valid: the earlier of `sentAt + expires_in` (counted from when the request was sent, which
 * errs on the safe side of latency) and the JWT `exp` claim, capped at a day after `sentAt`.
 */
export function tokenExpiry(expiresInSeconds: number | undefined, expClaimSeconds: number | undefined, sentAt: number): TokenExpiry {
  if (expiresInSeconds !== undefined && !(Number.isFinite(expiresInSeconds) && expiresInSeconds >= 0)) {
    return { kind: 'invalid', reason: 'expires_in is not a finite number of seconds' };
  }
  if (expClaimSeconds !== undefined && !Number.isFinite(expClaimSeconds)) {
    return { kind: 'invalid', reason: 'the exp claim is not a finite number' };
  }
  const candidates: number[] = [];
  if (expiresInSeconds !== undefined) candidates.push(sentAt + expiresInSeconds * 1000);
  if (expClaimSeconds !== undefined) candidates.push(expClaimSeconds * 1000);
  if (candidates.length === 0) return { kind: 'none' };
  const expiresAt = Math.min(...candidates);
  if (expiresAt - sentAt > MAX_VALIDITY_MS) {
    const fromSeconds = Number.isFinite(expiresAt) ? Math.floor((expiresAt - sentAt) / 1000) : Number.MAX_SAFE_INTEGER;
    return { kind: 'valid', expiresAt: sentAt + MAX_VALIDITY_MS, cappedFromSeconds: fromSeconds };
  }
  return { kind: 'valid', expiresAt: Math.floor(expiresAt) };
}

/** The seconds a client is told a token has left: a positive integer (a token with less left is not served). */
export function servedExpiresIn(expiresAt: number, now: number): number {
  return Math.max(1, Math.floor((expiresAt - now) / 1000));
}

/** The points in a cached token's life. Times are epoch milliseconds. */
export interface CachePlan {
  /** Until then the token is served as is. */
  readonly refreshAheadAt: number;
  /** Until then it is still served at once, and one background refresh gets the next token. */
  readonly refreshAt: number;
  /** After this it is never served (it is served past refreshAt only while the auth server fails). */
  readonly discardAt: number;
  /** The validity was shorter than twice the margin, so the token is refreshed after half of it. */
  readonly short: boolean;
}

/**
 * A token valid for V with margin M is fresh until 2M before its expiry and refreshed ahead (served at once, one
 * background refresh) until M before it. When V < 2M a margin cannot be kept: the token is fresh for half of V and
 * refreshed ahead until three quarters of V, so it costs a few auth calls a minute, not one per request. The
 * refresh-ahead point is never before the middle of the fresh part, so a token just longer than 2M is not refreshed
 * at once. A token without a known expiry is planned as if valid for `assumedValidityMs`.
 */
export function planCache(expiresAt: number | undefined, fetchedAt: number, marginMs: number, assumedValidityMs: number): CachePlan {
  const validUntil = expiresAt ?? fetchedAt + assumedValidityMs;
  const validity = Math.max(0, validUntil - fetchedAt);
  const short = validity < 2 * marginMs;
  const effectiveMargin = short ? validity / 4 : marginMs;
  const refreshAt = Math.floor(validUntil - effectiveMargin);
  const refreshAheadAt = Math.floor(Math.max(validUntil - 2 * effectiveMargin, fetchedAt + (refreshAt - fetchedAt) / 2));
  const discardAt = expiresAt === undefined ? validUntil : expiresAt - MIN_SERVABLE_MS;
  return { refreshAheadAt, refreshAt, discardAt, short };
}
