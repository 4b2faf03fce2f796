import { z } from 'zod';
import { UsageError } from '../errors.js';
import { SANDBOX_FAULTS, type SandboxFaults, type ValueSpec } from './fault-table.js';
import type { Limit } from './limits.js';

/** The schema of a whole number inside a limit of the limits table, for settings that arrive as JSON. */
export function integerIn(limit: Limit): z.ZodNumber {
  return z.number().int().min(limit.min).max(limit.max);
}

/** The schema of a value of the fault table. */
function schemaOf(spec: ValueSpec): z.ZodType {
  switch (spec.kind) {
    case 'integer': {
      const atLeast = z.number().int().min(spec.min);
      return spec.max === undefined ? atLeast : atLeast.max(spec.max);
    }
    case 'choice':
      return z.enum(spec.choices as readonly [string, ...string[]]);
    case 'origin':
      return z.string().refine((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), 'an http(s) origin');
    case 'switch':
      return z.boolean();
    case 'fields':
      return z.strictObject(
        Object.fromEntries(
          Object.entries(spec.fields).map(([name, field]) => [name, field.optional ? schemaOf(field).optional() : schemaOf(field)]),
        ),
      );
  }
}

/**
 * Every way faults reach the sandbox (options, setFaults, CLI flags, the admin endpoint) goes through this. Built
 * from the fault table, whose type it checks for: `SandboxFaults`.
 */
export const sandboxFaultsSchema = z.strictObject(
  Object.fromEntries(Object.entries(SANDBOX_FAULTS).map(([name, row]) => [name, schemaOf(row.value).optional()])),
) as unknown as z.ZodType<SandboxFaults>;

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
