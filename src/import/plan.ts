import { METRICS, type MetricName } from '../metrics/descriptors.js';
import type { Unit } from '../metrics/unit.js';
import type { DayMode } from '../window/day-mode.js';
import type { CalendarDay } from '../window/days.js';

/** One metric's days, in the order they are imported. */
export interface MetricDays {
  readonly metric: MetricName;
  readonly days: readonly CalendarDay[];
}

/** Units in (metric, day, store) order: the order they are committed in and the exit code is chosen by. */
export function planUnits(plan: readonly MetricDays[], storeCodes: readonly string[], mode: DayMode = 'utc'): Unit[] {
  const stores: (string | undefined)[] = storeCodes.length > 0 ? [...storeCodes] : [undefined];
  return plan.flatMap(({ metric, days }) =>
    days.flatMap((day) =>
      stores.map((storeCode) => ({ metric: METRICS[metric], day, ...(mode === 'utc' ? {} : { mode }), ...(storeCode === undefined ? {} : { storeCode }) })),
    ),
  );
}
