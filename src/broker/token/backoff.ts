import type { AuthFailureKind, AuthServerFailure } from './token-source.js';

/** The first failure keeps a platform's auth server alone for this long; each further one doubles it. */
export const BACKOFF_BASE_MS = 1000;
/** The longest back-off after repeated failures. */
export const BACKOFF_MAX_MS = 30_000;
/** The longest an auth server's Retry-After is honoured (a longer one would outlive the cached tokens' margins). */
export const MAX_RETRY_AFTER_MS = 60_000;

export interface BackoffState {
  /** The platform's auth server is not called before this (epoch ms). */
  readonly until: number;
  /** Consecutive failures; 0 once a call succeeds. */
  readonly failures: number;
  readonly kind: AuthFailureKind;
  readonly reason: string;
}

export interface BackoffEvents {
  /** The circuit opened (or re-opened after another failure): once per window, never per request. */
  opened(platform: string, state: BackoffState, windowMs: number): void;
  /** A call succeeded after failures. */
  closed(platform: string, failures: number): void;
}

/**
 * Per platform: after a failed auth-server call no call is made for a while (exponential from 1 s up to 30 s, or the
 * server's Retry-After up to 60 s, whichever is longer), so a failing or rate-limiting auth server is not flooded by
 * every request. Meanwhile the broker serves still-valid cached tokens, and answers the others at once.
 */
export class AuthBackoff {
  private readonly states = new Map<string, BackoffState>();

  constructor(
    private readonly now: () => number,
    private readonly events?: BackoffEvents,
  ) {}

  /** The state while calls are held back, undefined when the platform's auth server may be called. */
  holding(platform: string): BackoffState | undefined {
    const state = this.states.get(platform);
    return state !== undefined && this.now() < state.until ? state : undefined;
  }

  /** How long calls would be held back after one more failure without Retry-After. */
  nextWindowMs(platform: string): number {
    const failures = (this.states.get(platform)?.failures ?? 0) + 1;
    return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 30));
  }

  failed(platform: string, failure: AuthServerFailure): BackoffState {
    const failures = (this.states.get(platform)?.failures ?? 0) + 1;
    const windowMs = Math.max(this.nextWindowMs(platform), Math.min(failure.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
    const state: BackoffState = { until: this.now() + windowMs, failures, kind: failure.kind, reason: failure.message };
    this.states.set(platform, state);
    this.events?.opened(platform, state, windowMs);
    return state;
  }

  succeeded(platform: string): void {
    const state = this.states.get(platform);
    if (state === undefined) return;
    this.states.delete(platform);
    this.events?.closed(platform, state.failures);
  }

  /** Forgets a platform's failures without an event (its credentials changed: the next call is a new start). */
  forget(platform: string): void {
    this.states.delete(platform);
  }

  /** Platform → whether calls are held back now (for the metrics). */
  snapshot(): Map<string, BackoffState | undefined> {
    const now = this.now();
    return new Map([...this.states].map(([platform, state]) => [platform, now < state.until ? state : undefined]));
  }
}
