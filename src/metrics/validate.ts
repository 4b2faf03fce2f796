import type { MetricDescriptor, MetricResult } from './descriptors.js';

export interface Violation {
  /** Where in the record, e.g. `values[3].traffic_pct`. */
  readonly field: string;
  readonly value: unknown;
  readonly reason: string;
}

export type Validation = { readonly ok: true; readonly result: MetricResult } | { readonly ok: false; readonly violation: Violation };

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)),
    '',
  );
}

function valueAt(record: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = record;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Checks one result object against the metric's data contract (SPEC 2.5); reports the first broken field. */
export function validateResult(metric: MetricDescriptor, record: unknown): Validation {
  const parsed = metric.schema.safeParse(record);
  if (parsed.success) return { ok: true, result: parsed.data as MetricResult };
  const issue = parsed.error.issues[0];
  const path = issue?.path ?? [];
  return {
    ok: false,
    violation: {
      field: formatPath(path) || '(record)',
      value: valueAt(record, path),
      reason: issue?.message ?? 'is invalid',
    },
  };
}

/** The identity of a result, for duplicate detection; raw so that rejected records count too. */
export function resultKey(record: unknown): string {
  const { store_code: storeCode, date } = (record ?? {}) as { store_code?: unknown; date?: unknown };
  return `${String(storeCode)}\u0000${String(date)}`;
}

/** `values[3].traffic_pct "abc" must be ...`, or `values[0].zone is missing ...` when there is no value to show. */
export function describeViolation(violation: Violation): string {
  if (violation.value !== undefined) return `${violation.field} ${describeValue(violation.value)} ${violation.reason}`;
  return violation.reason.startsWith('is missing')
    ? `${violation.field} ${violation.reason}`
    : `${violation.field} is missing (${violation.reason})`;
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * A traffic result's zones should sum to 1; each value is rounded to 5 decimals, so a sum off by up to 0.00001 per
 * zone is rounding, anything more is worth a warning (never a failure: SPEC 2.5).
 */
export function trafficSumWarning(result: MetricResult): string | undefined {
  const values = result.values.map((entry) => Number(entry.traffic_pct));
  if (values.length === 0) return undefined;
  const sum = values.reduce((total, value) => total + value, 0);
  const tolerance = 0.00001 * values.length + 1e-9;
  return Math.abs(sum - 1) > tolerance ? `traffic_pct values sum to ${sum.toFixed(5)}, not 1` : undefined;
}
