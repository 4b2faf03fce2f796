import { z } from 'zod';
import { UsageError } from '../errors.js';
import { SANDBOX_LIMITS, type Limit } from './limits.js';
import { RATE_LIMIT_HEADERS, type SandboxFaults } from './types.js';

const count = z.number().int().min(1);

/** The schema of a whole number inside a limit of the limits table, for settings that arrive as JSON. */
export function integerIn(limit: Limit): z.ZodNumber {
  return z.number().int().min(limit.min).max(limit.max);
}
// A failure is an error status: a 1xx leaves the client waiting and a 204/304 cannot carry the JSON error body.
const status = z.number().int().min(400).max(599);

/** Every way faults reach the sandbox (options, setFaults, CLI flags, the admin endpoint) goes through this. */
export const sandboxFaultsSchema = z.strictObject({
  latencyMs: integerIn(SANDBOX_LIMITS.latencyMs).optional(),
  failNth: z.strictObject({ n: count, status, times: count.optional() }).optional(),
  rateLimitNth: z
    .strictObject({ n: count, retryAfterSeconds: integerIn(SANDBOX_LIMITS.retryAfterSeconds), times: count.optional() })
    .optional(),
  truncateNth: z.strictObject({ n: count, times: count.optional() }).optional(),
  foreignNextOrigin: z
    .string()
    .refine((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), 'an http(s) origin')
    .optional(),
  repeatResult: z.boolean().optional(),
  tokenLatencyMs: integerIn(SANDBOX_LIMITS.latencyMs).optional(),
  rateLimit: z
    .strictObject({ perSecond: integerIn(SANDBOX_LIMITS.ratePerSecond), headers: z.enum(RATE_LIMIT_HEADERS).optional() })
    .optional(),
  tokenFailNth: z.strictObject({ n: count, status, times: count.optional() }).optional(),
});

export function parseFaults(input: unknown, where: string): SandboxFaults {
  const parsed = sandboxFaultsSchema.safeParse(input);
  if (!parsed.success) {
    const details = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new UsageError(`invalid sandbox faults in ${where}: ${details.join('; ')}`);
  }
  const faults = parsed.data;
  // Links are built by appending a path, so keep only the origin.
  if (faults.foreignNextOrigin !== undefined) faults.foreignNextOrigin = new URL(faults.foreignNextOrigin).origin;
  return faults;
}

/** Whether the `ordinal`-th request (1-based) falls in [n, n + times). */
export function hits(rule: { n: number; times?: number } | undefined, ordinal: number): boolean {
  return rule !== undefined && ordinal >= rule.n && ordinal < rule.n + (rule.times ?? 1);
}
