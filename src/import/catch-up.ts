import type { MetricName } from '../metrics/descriptors.js';
import { stateKey, type ImportState } from '../output/state.js';
import { daysOfRanges } from '../window/day-ranges.js';
import type { DayMode } from '../window/day-mode.js';
import { catchUpDays, type CatchUpPlan } from '../window/days.js';

export interface MetricCatchUp extends CatchUpPlan {
  readonly metric: MetricName;
}

/**
 * `--catch-up` for each metric on its own, from its own coverage: its pending days and the days after its last settled
 * one. A metric with a gap is caught up even when another has no state yet (which starts at yesterday).
 */
export function catchUpFrom(
  state: ImportState | undefined,
  metrics: readonly MetricName[],
  storeCodes: readonly string[],
  options: { readonly maxDays: number; readonly lookback: number },
  now: Date,
  mode: DayMode = 'utc',
): MetricCatchUp[] {
  return metrics.map((metric) => {
    const coverage = state?.coverage(stateKey(metric, storeCodes));
    const settled = [...(coverage?.complete ?? []), ...(coverage?.accepted ?? []), ...(coverage?.givenUp ?? [])].map(([, last]) => last).sort();
    return {
      metric,
      ...catchUpDays(
        {
          complete: daysOfRanges(coverage?.complete ?? []),
          settledThrough: settled.at(-1),
          pending: (coverage?.pending ?? []).map(({ day }) => day),
        },
        options,
        now,
        mode,
      ),
    };
  });
}
