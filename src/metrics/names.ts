import { UsageError } from '../errors.js';

/**
 * The metrics by name, with the title help shows. Everything else about a metric is its descriptor
 * (`descriptors.ts`, a record keyed by these names, so a name without a descriptor does not compile); this module
 * stays light because the command list reads it for `--help`.
 */
export const METRIC_TITLES = {
  'unique-users': 'Unique Users',
  'avg-screen-time': 'Average Screen Time',
  traffic: 'Area Traffic',
} as const;

export type MetricName = keyof typeof METRIC_TITLES;

export const METRIC_NAMES = Object.keys(METRIC_TITLES) as readonly MetricName[];

/** What a command that takes one metric or all accepts, as help and its refusal say it: `a, b, c or all`. */
export const METRIC_OR_ALL = `${METRIC_NAMES.join(', ')} or all`;

/** The metrics a `<metric|all>` argument names; anything else is a usage error that lists them. */
export function metricsNamed(argument: string): readonly MetricName[] {
  if (argument === 'all') return METRIC_NAMES;
  const metric = METRIC_NAMES.find((name) => name === argument);
  if (metric === undefined) throw new UsageError(`unknown metric ${JSON.stringify(argument)}; use ${METRIC_OR_ALL}`);
  return [metric];
}
