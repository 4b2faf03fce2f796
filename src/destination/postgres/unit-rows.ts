import { dayWindow, type DayMode } from '../../window/day-mode.js';

/** A unit's place in the coverage table: `store` is '' for a unit of every store. */
export interface UnitKey {
  readonly metric: string;
  readonly day: string;
  readonly store: string;
}

/**
 * The unit's rows: a UTC day's are those whose instant lies in its window; a local day's, those of that `day`; a
 * store's unit, that store's of them. Each bounded on both columns, so that the `day` index finds them (BRIN, or an
 * earlier release's B-tree): an instant of UTC day D is on local day D-1, D or D+1, and an instant of local day D
 * within D-1 10:00Z and D+1 12:00Z, in every offset (-12:00 to +14:00).
 */
export function unitRows(mode: DayMode, key: UnitKey): { where: string; values: unknown[] } {
  const window = dayWindow(key.day, mode);
  const [where, values]: [string, unknown[]] =
    mode === 'local'
      ? [
          "day = $1 AND date >= ($1::date - 1)::timestamp AT TIME ZONE 'UTC' AND date < ($1::date + 2)::timestamp AT TIME ZONE 'UTC'",
          [key.day],
        ]
      : ['day BETWEEN $1::date - 1 AND $1::date + 1 AND date >= $2 AND date <= $3', [key.day, window.gte, window.lte]];
  if (key.store === '') return { where, values };
  return { where: `${where} AND store_code = $${values.length + 1}`, values: [...values, key.store] };
}
