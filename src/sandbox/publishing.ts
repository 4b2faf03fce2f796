import { z } from 'zod';
import { UsageError } from '../errors.js';
import { integerIn } from './faults.js';
import { SANDBOX_LIMITS } from './limits.js';
import { METRIC_NAMES, type MetricName, type SandboxPublishing } from './types.js';

const DAY_MS = 86_400_000;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD')
  .refine(
    (text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text),
    'a day that exists',
  );
const stores = z.array(z.string().min(1)).min(1).optional();

/** Every way publishing rules reach the sandbox (options, setPublishing, CLI flags, the admin endpoint) goes through this. */
export const sandboxPublishingSchema = z.strictObject({
  hidden: z.array(z.strictObject({ day, stores })).optional(),
  corrected: z.array(z.strictObject({ day, stores, revision: integerIn(SANDBOX_LIMITS.revision) })).optional(),
  distorted: z
    .array(
      z.strictObject({
        day,
        stores,
        metrics: z.array(z.enum(METRIC_NAMES)).min(1).optional(),
        factor: z.number().min(SANDBOX_LIMITS.distortFactor.min).max(SANDBOX_LIMITS.distortFactor.max),
      }),
    )
    .optional(),
});

export function parsePublishing(input: unknown, where: string): SandboxPublishing {
  const parsed = sandboxPublishingSchema.safeParse(input);
  if (!parsed.success) {
    const details = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new UsageError(`invalid sandbox publishing rules in ${where}: ${details.join('; ')}`);
  }
  return parsed.data;
}

/**
 * The publishing rules as a lookup by result: a result (store, instant of its local midnight) belongs to the UTC day
 * that holds its instant, which is the window an importer asks for.
 */
export class PublishingRules {
  private readonly hidden: { readonly dayStart: number; readonly stores?: ReadonlySet<string> }[];
  private readonly corrected: { readonly dayStart: number; readonly stores?: ReadonlySet<string>; readonly revision: number }[];
  private readonly distorted: {
    readonly dayStart: number;
    readonly stores?: ReadonlySet<string>;
    readonly metrics?: readonly MetricName[];
    readonly factor: number;
  }[];

  constructor(readonly rules: SandboxPublishing) {
    const dayStart = (text: string): number => Date.parse(`${text}T00:00:00Z`);
    const storeSet = (codes: readonly string[] | undefined): { stores?: ReadonlySet<string> } =>
      codes === undefined ? {} : { stores: new Set(codes) };
    this.hidden = (rules.hidden ?? []).map((rule) => ({ dayStart: dayStart(rule.day), ...storeSet(rule.stores) }));
    this.corrected = (rules.corrected ?? []).map((rule) => ({
      dayStart: dayStart(rule.day),
      revision: rule.revision,
      ...storeSet(rule.stores),
    }));
    this.distorted = (rules.distorted ?? []).map((rule) => ({
      dayStart: dayStart(rule.day),
      factor: rule.factor,
      ...storeSet(rule.stores),
      ...(rule.metrics === undefined ? {} : { metrics: rule.metrics }),
    }));
  }

  get distortsAny(): boolean {
    return this.distorted.length > 0;
  }

  get hidesAny(): boolean {
    return this.hidden.length > 0;
  }

  isHidden(storeCode: string, instantMs: number): boolean {
    const start = Math.floor(instantMs / DAY_MS) * DAY_MS;
    return this.hidden.some((rule) => rule.dayStart === start && (rule.stores === undefined || rule.stores.has(storeCode)));
  }

  /** 0 for the values as first published; the latest matching correction's revision otherwise. */
  revision(storeCode: string, instantMs: number): number {
    return latestMatch(this.corrected, storeCode, instantMs)?.revision ?? 0;
  }

  /** The factor the values of a metric's result are distorted by; undefined for values as they should be. */
  distortion(metric: string, storeCode: string, instantMs: number): number | undefined {
    return latestMatch(
      this.distorted.filter((rule) => rule.metrics === undefined || rule.metrics.some((name) => name === metric)),
      storeCode,
      instantMs,
    )?.factor;
  }
}

/** The last rule of the list that names the UTC day holding the instant and (when it names stores) the store. */
function latestMatch<R extends { readonly dayStart: number; readonly stores?: ReadonlySet<string> }>(
  rules: readonly R[],
  storeCode: string,
  instantMs: number,
): R | undefined {
  const start = Math.floor(instantMs / DAY_MS) * DAY_MS;
  return rules.findLast((rule) => rule.dayStart === start && (rule.stores === undefined || rule.stores.has(storeCode)));
}
