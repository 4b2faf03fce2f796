import { DayCompletion, type DayNote, type DayUnit, type UnitFigures } from '../import/day-completion.js';
import type { ImportState } from '../state/import-state.js';
import type { SuspectMode } from '../state/judgement/suspect.js';
import type { DayMode } from '../window/day-mode.js';

export type { DayNote, DayUnit, UnitFigures };

/** A unit of a night with its figures, as a nightly import has them once the unit is written. */
export interface JudgedUnit {
  readonly unit: DayUnit;
  readonly figures: UnitFigures;
}

/** The import's flags that judge a day, as a night of the backtest runs them. */
export interface NightRules {
  readonly now: Date;
  readonly mode: DayMode;
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly onSuspect: SuspectMode;
}

/**
 * The one place the backtest calls the import's judgement of a day: a night's units (in plan order), each recorded
 * and its day judged and written to the state by the import's own code, exactly as a run does after writing them.
 */
export async function judgeNight(state: ImportState, units: readonly JudgedUnit[], rules: NightRules): Promise<DayNote[]> {
  const completion = new DayCompletion(
    units.map(({ unit }) => unit),
    { ...rules, storeCodes: [] },
    state,
  );
  const notes: DayNote[] = [];
  for (const { unit, figures } of units) notes.push(...(await completion.record({ unit, ok: true, data: figures })));
  return notes;
}
