import { UsageError } from '../errors.js';

/** A whole-number setting's accepted range, and how messages name it. */
export interface Limit {
  readonly label: string;
  readonly min: number;
  readonly max: number;
}

/**
 * The one table of the sandbox's numeric ranges: `startSandbox` checks its options against it, the fault and
 * publishing schemas take their bounds from it, and the `sandbox` command's flags parse with it. (No zod here:
 * the command's `--help` loads this module.)
 */
export const SANDBOX_LIMITS = {
  port: { label: 'port', min: 0, max: 65_535 },
  stores: { label: 'stores', min: 1, max: 1_000_000 },
  zones: { label: 'zones', min: 1, max: 1000 },
  // Ten years of days.
  days: { label: 'days', min: 1, max: 3660 },
  seed: { label: 'seed', min: 0, max: 2 ** 31 - 1 },
  // One year.
  tokenTtlSeconds: { label: 'token TTL', min: 1, max: 31_536_000 },
  // Ten minutes: longer than any client timeout worth testing.
  latencyMs: { label: 'latency', min: 0, max: 600_000 },
  // Requests a second of `--rate-limit`.
  ratePerSecond: { label: 'rate limit', min: 1, max: 100_000 },
  // One day.
  retryAfterSeconds: { label: 'Retry-After', min: 0, max: 86_400 },
  publishAfterSeconds: { label: 'publish delay', min: 0, max: 86_400 },
  revision: { label: 'revision', min: 1, max: 1_000_000 },
  requestLogCapacity: { label: 'request log capacity', min: 1, max: 1_000_000 },
  // A factor for distorted values (not a whole number): a thousandfold is far enough to look wrong.
  distortFactor: { label: 'distort factor', min: 0, max: 1000 },
} as const satisfies Record<string, Limit>;

/** `value` when it is a whole number inside `limit`; a usage error naming the setting otherwise. */
export function checkInteger(value: number, limit: Limit): number {
  if (!Number.isInteger(value) || value < limit.min || value > limit.max) {
    throw new UsageError(`sandbox ${limit.label} must be an integer in ${limit.min}..${limit.max} (got ${value})`);
  }
  return value;
}
