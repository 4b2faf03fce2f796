import type { Redactor } from '../../redact.js';

/** The longest a client-given value (a path, a reason) is written into a log line or echoed in an error body. */
export const MAX_LOGGED_VALUE_LENGTH = 200;

/**
 * The value with its secrets masked, then cut to MAX_LOGGED_VALUE_LENGTH characters and marked when it was cut. Masked
 * first: a secret the cut splits would leave its first part, which the log line's own masking no longer recognises.
 */
export function cutForLog(value: string, redact: Redactor): string {
  const masked = redact(value);
  return masked.length <= MAX_LOGGED_VALUE_LENGTH ? masked : `${masked.slice(0, MAX_LOGGED_VALUE_LENGTH)}…(${masked.length} chars)`;
}

// Kinds are a status and a problem name, a small fixed set; the cap only guards against a bug making them unbounded.
const MAX_KINDS = 100;

/**
 * Errors of one kind (status and problem) are logged once per interval, with the client that met them first; the
 * rest are counted and reported in one line at the end of the interval. One client cannot then fill the disk by
 * sending bad requests: the log grows by a few lines per interval whatever it sends.
 */
export class ErrorSummary {
  private readonly suppressed = new Map<string, number>();
  private windowStart: number;

  constructor(private readonly now: () => number = Date.now) {
    this.windowStart = now();
  }

  /** Whether this error gets its own line (the first of its kind in the interval); otherwise it is counted. */
  shouldLog(kind: string): boolean {
    const count = this.suppressed.get(kind);
    if (count === undefined) {
      if (this.suppressed.size >= MAX_KINDS) return false;
      this.suppressed.set(kind, 0);
      return true;
    }
    this.suppressed.set(kind, count + 1);
    return false;
  }

  /** Errors not logged one by one since the last take, by kind, and the window; undefined when there were none. */
  take(): { readonly errors: Record<string, number>; readonly windowSeconds: number } | undefined {
    const now = this.now();
    const windowSeconds = Math.round((now - this.windowStart) / 100) / 10;
    this.windowStart = now;
    const errors: Record<string, number> = {};
    let any = false;
    for (const [kind, count] of this.suppressed) {
      if (count > 0) {
        errors[kind] = count;
        any = true;
      }
    }
    this.suppressed.clear();
    return any ? { errors, windowSeconds } : undefined;
  }
}

/**
 * The client of a request: the peer address, or the first X-Forwarded-For hop when the proxy in front is trusted to
 * set it (a client could write any value there itself).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trustProxy: boolean, redact: Redactor): string {
  if (trustProxy && forwardedFor !== undefined) {
    const comma = forwardedFor.indexOf(',');
    const first = (comma === -1 ? forwardedFor : forwardedFor.slice(0, comma)).trim();
    if (first !== '') return cutForLog(first, redact);
  }
  return peer ?? 'unknown';
}
