import type { CalendarDay } from '../window/days.js';
import type { ImportState } from '../state/import-state.js';
import { stateKey } from '../state/keys.js';
import { addSums, emptySums, totalOf, type MeasureSums, type MetricTotal } from '../metrics/measure.js';
import { mergeStoreSums, storeTotals, type StoreSums } from '../metrics/store-sums.js';
import { judgeDay, type DayFigures, type DayNote, type DayRules } from '../state/judgement/verdict.js';

/** What judging a day needs of a unit: its metric (and how its day is totalled) and day. */
export interface DayUnit {
  readonly metric: { readonly name: string; readonly total: MetricTotal };
  readonly day: CalendarDay;
}

/** What judging a day needs of a written unit's data. */
export interface UnitFigures {
  /** Results the vendor counted, and those of them that belong to a neighbouring local day. */
  readonly count: number;
  readonly dropped: number;
  readonly rowCount: number;
  /** The stores of its results, sorted. */
  readonly storeCodes: readonly string[];
  /** The metric's total over its results, as sums. */
  readonly measure: MeasureSums;
  /** The same store by store, in the order of `storeCodes`. */
  readonly storeSums: readonly MeasureSums[];
}

/** A unit as the pipeline commits it: written (with its figures), or failed. */
export type CommittedUnit =
  | { readonly unit: DayUnit; readonly ok: true; readonly data: UnitFigures }
  | { readonly unit: DayUnit; readonly ok: false; readonly error: unknown };

export type { DayNote, DayRules, MissingStores } from '../state/judgement/verdict.js';

/** What the units of one (metric, day) brought, filled in as they are committed. */
interface DayTally {
  readonly total: MetricTotal;
  left: number;
  failed: boolean;
  results: number;
  rows: number;
  readonly measure: MeasureSums;
  /** Each unit's store sums (its stores, each once), made one when the day is judged. */
  readonly storeSums: StoreSums[];
}

/**
 * Tallies each (metric, day) as its units are committed (in plan order) and, once every unit of it is in, has it judged
 * (`judgeDay`, pure: the rules are there) and the verdict recorded in the state (`ImportState.record`). Each day is
 * judged on its own: a pending day never holds later days back. What a judgement has to say is returned as notes,
 * for the report.
 */
export class DayCompletion {
  private readonly tallies = new Map<string, DayTally>();

  constructor(
    private readonly units: readonly DayUnit[],
    private readonly rules: DayRules,
    private readonly state: ImportState | undefined,
  ) {
    for (const unit of units) {
      const key = `${unit.metric.name} ${unit.day}`;
      const tally = this.tallies.get(key) ?? {
        total: unit.metric.total,
        left: 0,
        failed: false,
        results: 0,
        rows: 0,
        measure: emptySums(),
        storeSums: [],
      };
      tally.left++;
      this.tallies.set(key, tally);
    }
  }

  /** Before any request: the days of the run are pending (`asked`) until judged, so a run killed half-way leaves them pending. */
  async markAsked(): Promise<void> {
    await this.state?.markAsked(this.daysWhere(() => true));
  }

  /** When the run has ended: the days it never judged (it was interrupted, or stopped early) are pending `interrupted`. */
  async endRun(): Promise<void> {
    const unjudged = this.daysWhere((tally) => tally.left > 0);
    if (unjudged.length > 0) await this.state?.markInterrupted(unjudged);
  }

  /** Tallies the unit and, when it is its day's last, judges and records the day; returns what that judgement says. */
  async record(outcome: CommittedUnit): Promise<DayNote[]> {
    const { metric, day } = outcome.unit;
    const tally = this.tallies.get(`${metric.name} ${day}`);
    if (tally === undefined) return [];
    if (outcome.ok) {
      tally.results += outcome.data.count - outcome.data.dropped;
      tally.rows += outcome.data.rowCount;
      addSums(tally.measure, outcome.data.measure);
      tally.storeSums.push({ codes: outcome.data.storeCodes, sums: outcome.data.storeSums });
    } else {
      tally.failed = true;
    }
    const notes = --tally.left > 0 ? [] : await this.finishDay(metric.name, day, tally);
    return notes;
  }

  /** The day's verdict, from its tally and the state as it is, recorded in the state; returns what it says. */
  private async finishDay(metric: string, day: CalendarDay, tally: DayTally): Promise<DayNote[]> {
    const key = stateKey(metric, this.rules.storeCodes);
    const stores = mergeStoreSums(tally.storeSums);
    // The units' stores in the order they came, each once: a day of one unit has its own (a set of 20,000 codes a
    // judged day costs a backtest's night more than judging them).
    const reported = tally.storeSums.length === 1 ? tally.storeSums[0]!.codes : [...new Set(tally.storeSums.flatMap(({ codes }) => codes))];
    const figures: DayFigures = {
      failed: tally.failed,
      results: tally.results,
      stores: reported,
      profile: [tally.results, reported.length, tally.rows, totalOf(tally.measure, tally.total)],
      measure: tally.total.measure,
      allZero: tally.measure.weight > 0 && tally.measure.nonZero === 0,
      storeCodes: stores.codes,
      storeValues: storeTotals(stores, tally.total),
    };
    const verdict = judgeDay({ key, metric, day }, figures, this.rules, this.state);
    await this.state?.record(key, day, verdict.outcome);
    return [...verdict.notes];
  }

  /** The run's days whose tally passes, as state keys and days. */
  private daysWhere(test: (tally: DayTally) => boolean): { key: string; day: CalendarDay }[] {
    const days = new Map<string, { key: string; day: CalendarDay }>();
    for (const unit of this.units) {
      const tally = this.tallies.get(`${unit.metric.name} ${unit.day}`);
      if (tally === undefined || !test(tally)) continue;
      const key = stateKey(unit.metric.name, this.rules.storeCodes);
      days.set(`${key} ${unit.day}`, { key, day: unit.day });
    }
    return [...days.values()];
  }
}
