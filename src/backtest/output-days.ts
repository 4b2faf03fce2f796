import type { StoredUnit, StoredUnits } from '../destination/stored-units.js';
import type { MetricDescriptor } from '../metrics/descriptors.js';
import { daysBetween, type CalendarDay } from '../window/days.js';
import { FiguresBuilder, unitFigures } from './figures.js';
import type { UnitFigures } from './judge-night.js';
import type { ReplayInput } from './replay.js';

/** The span a backtest covers: `--from`/`--to`, each open when not given. */
export interface DaySpan {
  readonly from?: CalendarDay;
  readonly to?: CalendarDay;
}

/**
 * What an output holds as a replay's input: each metric's days from its first stored day to its last (within the
 * span), a day without a unit being one the vendor had not published; a day's units read back as stored.
 */
export function outputDays(stored: StoredUnits, span: DaySpan): Pick<ReplayInput, 'daysOf' | 'read' | 'figures'> {
  const byMetric = new Map<string, Promise<ReadonlyMap<CalendarDay, readonly StoredUnit[]>>>();
  const unitsOf = (metric: MetricDescriptor): Promise<ReadonlyMap<CalendarDay, readonly StoredUnit[]>> => {
    let units = byMetric.get(metric.name);
    if (units === undefined) {
      units = stored.unitsOf(metric.name);
      byMetric.set(metric.name, units);
    }
    return units;
  };
  return {
    async daysOf(metric) {
      const days = [...(await unitsOf(metric)).keys()].filter(
        (day) => (span.from === undefined || day >= span.from) && (span.to === undefined || day <= span.to),
      );
      return days.length === 0 ? [] : daysBetween(days[0]!, days.at(-1)!);
    },
    async read(metric, day) {
      const units = (await unitsOf(metric)).get(day) ?? [];
      return Promise.all(units.map((unit) => unit.read()));
    },
    async figures(metric, day) {
      const units = (await unitsOf(metric)).get(day) ?? [];
      return Promise.all(units.map((unit) => unitFiguresOf(metric, unit)));
    },
  };
}

/** A unit's figures added up as its results are read, when it can be read so; else from its results read whole. */
async function unitFiguresOf(metric: MetricDescriptor, unit: StoredUnit): Promise<UnitFigures> {
  if (unit.each === undefined) return unitFigures(metric, await unit.read());
  let figures = new FiguresBuilder(metric);
  await unit.each(() => {
    figures = new FiguresBuilder(metric);
    const builder = figures;
    return (result) => builder.add(result);
  });
  return figures.figures();
}
