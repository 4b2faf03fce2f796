import { DESCRIPTORS, type MetricDescriptor } from '../metrics/descriptors.js';
import type { Unit } from '../metrics/unit.js';
import { catchUpFrom } from '../state/judgement/catch-up.js';
import type { ImportState } from '../state/import-state.js';
import { describeDays, describeRange } from '../window/day-ranges.js';
import type { DayMode } from '../window/day-mode.js';
import type { CalendarDay } from '../window/days.js';
import { resolveDays } from '../window/requested-days.js';
import type { SettledWindow } from './config.js';

/** A warning the planning of the days has (a `--max-days` cut). */
export interface PlanWarning {
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** One metric's days, in the order they are imported. */
export interface MetricDays {
  /** The metric's name. */
  readonly metric: string;
  readonly days: readonly CalendarDay[];
}

/**
 * Units in (metric, day, store) order: the order they are committed in and the exit code is chosen by. Each carries
 * its metric's descriptor, from `metrics` (every metric the tool knows, unless a caller brings its own).
 */
export function planUnits(
  plan: readonly MetricDays[],
  storeCodes: readonly string[],
  mode: DayMode = 'utc',
  metrics: readonly MetricDescriptor[] = DESCRIPTORS,
): Unit[] {
  const stores: (string | undefined)[] = storeCodes.length > 0 ? [...storeCodes] : [undefined];
  const descriptorOf = (name: string): MetricDescriptor => {
    const descriptor = metrics.find((metric) => metric.name === name);
    if (descriptor === undefined) throw new Error(`no descriptor for the metric ${name}`);
    return descriptor;
  };
  return plan.flatMap(({ metric, days }) =>
    days.flatMap((day) =>
      stores.map((storeCode) => ({
        metric: descriptorOf(metric),
        day,
        ...(mode === 'utc' ? {} : { mode }),
        ...(storeCode === undefined ? {} : { storeCode }),
      })),
    ),
  );
}

/** What a run is asked to import: its window section, with the day mode settled. */
export type DaysRequest = SettledWindow;

/**
 * The days of each metric: `--catch-up` per metric from its own coverage (each `--max-days` cut a warning naming the
 * days left), otherwise the window the flags name, the same for every metric.
 */
export function planDays<M extends string>(
  metricNames: readonly M[],
  request: DaysRequest,
  state: ImportState | undefined,
  now: Date,
): { plan: { metric: M; days: CalendarDay[] }[]; cuts: PlanWarning[] } {
  const window = request.days;
  if (window.kind !== 'catch-up') {
    const days = resolveDays(window, now, request.dayMode);
    return { plan: metricNames.map((metric) => ({ metric, days })), cuts: [] };
  }
  const cuts: PlanWarning[] = [];
  const plan = catchUpFrom(state, metricNames, request.storeCodes, window, now, request.dayMode).map((metric) => {
    if (metric.freshLeft) {
      const { fresh, freshLeft } = metric;
      cuts.push({
        message:
          `${metric.metric}: --max-days ${window.maxDays} cut the new days: importing ${describeDays(fresh)} now, ` +
          `${freshLeft.count} more day${freshLeft.count === 1 ? ' is' : 's are'} left (${describeRange([freshLeft.from, freshLeft.to])}) for the next --catch-up`,
        fields: { metric: metric.metric, max_days: window.maxDays, days_left: freshLeft.count },
      });
    }
    if (metric.pendingLeft) {
      cuts.push({
        message:
          `${metric.metric}: --max-days ${window.maxDays} cut the pending days: retrying the oldest ${metric.pending.length - (metric.heldRetried ?? 0)} ` +
          `(${describeDays(metric.pending)}${metric.heldRetried ? `, held suspect days among them` : ''}), ${metric.pendingLeft} more wait for the next --catch-up`,
        fields: { metric: metric.metric, max_days: window.maxDays, pending_left: metric.pendingLeft },
      });
    }
    return { metric: metric.metric, days: metric.days };
  });
  return { plan, cuts };
}
