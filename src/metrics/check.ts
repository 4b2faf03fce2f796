import type { MetricDescriptor, MetricResult } from './descriptors.js';
import { jsonOrUndefined } from '../output/format.js';
import { isDayOrNeighbour, localDayOf } from '../window/day-mode.js';
import { dateTimeOf, hasControlCharacter, hasRepeatedZone } from './schema.js';

/** Where a record breaks the data contract, with the value found there. */
export interface Violation {
  /** Where in the record, e.g. `values[3].traffic_pct`. */
  readonly field: string;
  readonly value: unknown;
  readonly reason: string;
}

export type ResultCheck =
  | { readonly ok: true; readonly result: MetricResult; readonly instant: number }
  | { readonly ok: false; readonly violation: Violation };

/** The requested unit a result must belong to: its window of instants, and its store when one was asked for. */
export interface RequestScope {
  readonly fromMs: number;
  readonly toMs: number;
  /** The window as it was asked for, for messages. */
  readonly label: string;
  readonly storeCode?: string;
  /** In local mode, the local day asked for: a result's `day` must be it or a neighbour (which is dropped). */
  readonly localDay?: string;
}

/**
 * Checks one result against the metric's data contract and against what was asked. Nearly every record is plainly
 * valid: `plainlyValid` proves that with typeof and the schemas' own regexes; any other record goes through the zod
 * schema, which is the contract and names the broken field. Either way the result is the record itself.
 */
export function checkResult(metric: MetricDescriptor, record: unknown, scope: RequestScope): ResultCheck {
  let result = plainlyValid(metric, record);
  if (result === undefined) {
    const parsed = metric.schema.safeParse(record);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path ?? [];
      return {
        ok: false,
        violation: { field: formatPath(path) || '(record)', value: valueAt(record, path), reason: issue?.message ?? 'is invalid' },
      };
    }
    result = record as MetricResult;
  }
  const when = dateTimeOf(result.date);
  // The schema admitted the date, so it parses.
  const instant = when.ok ? when.instant : Number.NaN;
  if (!(instant >= scope.fromMs && instant <= scope.toMs)) {
    return { ok: false, violation: { field: 'date', value: result.date, reason: `lies outside the requested window ${scope.label}` } };
  }
  if (scope.localDay !== undefined && !isDayOrNeighbour(scope.localDay, localDayOf(result.date))) {
    return {
      ok: false,
      violation: {
        field: 'date',
        value: result.date,
        reason: `is a local day neither ${scope.localDay} nor a day next to it, which its window cannot hold`,
      },
    };
  }
  if (scope.storeCode !== undefined && result.store_code !== scope.storeCode) {
    return {
      ok: false,
      violation: { field: 'store_code', value: result.store_code, reason: `is not the requested store ${JSON.stringify(scope.storeCode)}` },
    };
  }
  return { ok: true, result, instant };
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.isWellFormed() && !hasControlCharacter(value);
}

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The record as a valid result when it plainly is one; undefined means "let the schema decide" (never "invalid").
 * The same rules as `resultSchema`, written out: `test/metrics/check.test.ts` holds the two to each other.
 */
export function plainlyValid(metric: MetricDescriptor, record: unknown): MetricResult | undefined {
  if (!isPlainObject(record)) return undefined;
  const { store_code: storeCode, date, granularity, values } = record;
  if (!isText(storeCode) || typeof date !== 'string' || !dateTimeOf(date).ok || granularity !== 'daily' || !Array.isArray(values)) {
    return undefined;
  }
  const { isValue, valueKey } = metric;
  const entries: readonly unknown[] = values;
  let previous = '';
  let sorted = true;
  for (const entry of entries) {
    if (!isPlainObject(entry)) return undefined;
    const { zone, zone_name: zoneName } = entry;
    if ((zone !== undefined && !isText(zone)) || (zoneName !== undefined && !isText(zoneName))) return undefined;
    const name = zone ?? zoneName;
    if (name === undefined || !isValue(entry[valueKey])) return undefined;
    // Zones usually arrive sorted; then "each one greater than the one before" also proves them unique.
    if (name <= previous) sorted = false;
    previous = name;
  }
  if (!sorted && hasRepeatedZone(entries as readonly Readonly<Record<string, unknown>>[])) return undefined;
  return record as unknown as MetricResult;
}

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

/** `values[3].traffic_pct "abc" must be ...`, or `values[0].zone is missing ...` when there is no value to show. */
export function describeViolation(violation: Violation): string {
  if (violation.value !== undefined) return `${violation.field} ${describeValue(violation.value)} ${violation.reason}`;
  return violation.reason.startsWith('is missing')
    ? `${violation.field} ${violation.reason}`
    : `${violation.field} is missing (${violation.reason})`;
}

/** A value as JSON, cut to 80 characters; a value too deeply nested to stringify is said to be so. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = jsonOrUndefined(value) ?? '(a value nested too deeply to show)';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
