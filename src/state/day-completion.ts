import type { Logger } from '../log/logger.js';
import type { UtcDay } from '../window/days.js';
import { inItsDay, isNotOver, overAt, type DayMode } from '../window/day-mode.js';
import { isSettled, shouldGiveUp } from './day-rules.js';
import type { ImportState } from './import-state.js';
import { stateKey } from './keys.js';
import { addSums, emptySums, totalOf, type DayProfile, type MeasureSums, type MetricTotal } from './profile.js';
import { describeSuspicion, suspicionOf, type Suspicion, type SuspectMode } from './suspect.js';

/** What judging a day needs of a unit: its metric (and how its day is totalled) and day. */
export interface DayUnit {
  readonly metric: { readonly name: string; readonly total: MetricTotal };
  readonly day: UtcDay;
}

/** What judging a day needs of a written unit's data. */
export interface UnitFigures {
  /** Results the vendor counted, and those of them that belong to a neighbouring local day. */
  readonly count: number;
  readonly dropped: number;
  readonly rowCount: number;
  /** The stores of its results. */
  readonly storeCodes: readonly string[];
  /** The local midnight of each result kept, epoch ms. */
  readonly localMidnights: readonly number[];
  /** The metric's total over its results, as sums. */
  readonly measure: MeasureSums;
}

/** A unit as the pipeline commits it: written (with its figures), or failed. */
export type CommittedUnit =
  | { readonly unit: DayUnit; readonly ok: true; readonly data: UnitFigures }
  | { readonly unit: DayUnit; readonly ok: false; readonly error: unknown };

export interface DayRules {
  readonly storeCodes: readonly string[];
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly now: Date;
  readonly mode: DayMode;
  /** What a complete day whose numbers look wrong does. */
  readonly onSuspect: SuspectMode;
}

/** What the units of one (metric, day) brought, filled in as they are committed. */
interface DayTally {
  readonly total: MetricTotal;
  left: number;
  failed: boolean;
  results: number;
  rows: number;
  readonly measure: MeasureSums;
  /** Results whose local day has not ended at the run's clock. */
  inTheirDay: number;
  readonly stores: Set<string>;
}

/** How many store codes a warning names before it says "...". */
const NAMED_STORES = 5;

/**
 * Judges each (metric, day) once every unit of it is committed (in plan order), and records the judgement in the
 * state: complete when its window is over, it has results, and no store of the metric's latest complete day (with
 * `--store`: no store asked for) is missing; a day `settleDays` old is complete even with stores missing, so a store
 * that closed does not hold the state back. A complete day keeps its profile in the state, and one whose numbers look
 * wrong next to the days before it is held pending as `suspect` (or, as `onSuspect` says, recorded with a warning, or
 * not judged). Otherwise the day is pending with its reason, and a day still unpublished `giveUpDays` after its window
 * ended is given up, with one warning. A day already final stays final. Each day is judged on its own: a pending day
 * never holds later days back.
 */
export class DayCompletion {
  /** Warnings logged about days (not published, partly published, not over, given up, suspect). */
  warnings = 0;
  /** Rows of the units recorded so far, per metric: what the run wrote, also when it is interrupted. */
  readonly rowsByMetric: Record<string, number> = {};
  private readonly tallies = new Map<string, DayTally>();
  private notes: string[] = [];

  constructor(
    private readonly units: readonly DayUnit[],
    private readonly rules: DayRules,
    private readonly state: ImportState | undefined,
    private readonly logger: Logger,
  ) {
    for (const unit of units) {
      const key = `${unit.metric.name} ${unit.day}`;
      const tally = this.tallies.get(key) ?? { total: unit.metric.total, left: 0, failed: false, results: 0, rows: 0, measure: emptySums(), inTheirDay: 0, stores: new Set<string>() };
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

  /** The run's days whose tally passes, as state keys and days. */
  private daysWhere(test: (tally: DayTally) => boolean): { key: string; day: UtcDay }[] {
    const days = new Map<string, { key: string; day: UtcDay }>();
    for (const unit of this.units) {
      const tally = this.tallies.get(`${unit.metric.name} ${unit.day}`);
      if (tally === undefined || !test(tally)) continue;
      const key = stateKey(unit.metric.name, this.rules.storeCodes);
      days.set(`${key} ${unit.day}`, { key, day: unit.day });
    }
    return [...days.values()];
  }

  /** Tallies the unit and, when it is its day's last, judges and records the day; returns the unit's final outcome. */
  async record<T extends CommittedUnit>(outcome: T): Promise<T> {
    const committed: CommittedUnit = outcome;
    const { metric, day } = committed.unit;
    const tally = this.tallies.get(`${metric.name} ${day}`);
    if (tally === undefined) return outcome;
    if (committed.ok) {
      tally.results += committed.data.count - committed.data.dropped;
      tally.rows += committed.data.rowCount;
      addSums(tally.measure, committed.data.measure);
      for (const code of committed.data.storeCodes) tally.stores.add(code);
      for (const midnight of committed.data.localMidnights) if (inItsDay(midnight, this.rules.now)) tally.inTheirDay++;
    } else {
      tally.failed = true;
    }
    if (--tally.left === 0) await this.finishDay(metric.name, day, tally);
    if (committed.ok) this.rowsByMetric[metric.name] = (this.rowsByMetric[metric.name] ?? 0) + committed.data.rowCount;
    return outcome;
  }

  /** Logs what the last `record` had to say about its day (after the unit's own line). */
  logNotes(): void {
    for (const note of this.notes) this.logger.warn(note);
    this.notes = [];
  }

  private async finishDay(metric: string, day: UtcDay, tally: DayTally): Promise<void> {
    const key = stateKey(metric, this.rules.storeCodes);
    const label = `${metric} ${day}`;
    if (this.state?.isFinal(key, day)) {
      // Already complete or accepted (a look-back or a backfill): a final day stays final.
      if (!tally.failed && tally.results === 0) this.warn(`${label}: no results on this re-import; the file of the earlier import is kept`);
      return;
    }
    if (tally.failed) {
      // The failure has been logged with its unit and decides the exit code; the day waits for the next run.
      if (!this.state?.isGivenUp(key, day)) await this.state?.markPending(key, day, { reason: 'failed' });
      return;
    }
    if (isNotOver(day, this.rules.mode, this.rules.now)) {
      // Every local day the window can hold must have ended: until then a store's figures may still change.
      const until = new Date(overAt(day, this.rules.mode)).toISOString().replace('.000Z', 'Z');
      this.warn(
        `${label}: not over until ${until}, when every store's local day in it has ended (${tally.inTheirDay} of ${tally.stores.size} ` +
          `store${tally.stores.size === 1 ? '' : 's'} of its results still in their day); imported what there is, not recorded complete; the next --catch-up asks again`,
      );
      await this.state?.markPending(key, day, { reason: 'not-over', stores: tally.stores.size });
      return;
    }
    if (tally.results === 0) {
      if (this.state?.isGivenUp(key, day)) return;
      if (shouldGiveUp(day, this.rules.giveUpDays, this.rules.now)) {
        this.warn(
          `${label}: still not published ${this.rules.giveUpDays} days after its window ended (--give-up-days ${this.rules.giveUpDays}): given up, ` +
            `--catch-up no longer asks for it; \`area-metrics accept ${metric} --date ${day}\` settles it, \`reopen\` asks again`,
        );
        await this.state?.markGivenUp(key, day);
        return;
      }
      this.warn(`${label}: no results: the vendor has not published this day yet; nothing written, not recorded complete; the next --catch-up asks again`);
      await this.state?.markPending(key, day, { reason: 'not-published', stores: 0 });
      return;
    }
    const expected = this.rules.storeCodes.length > 0 ? this.rules.storeCodes : (this.state?.storeCodes(key) ?? []);
    const missing = expected.filter((code) => !tally.stores.has(code));
    if (missing.length > 0) {
      const named = `${missing.slice(0, NAMED_STORES).join(', ')}${missing.length > NAMED_STORES ? ', ...' : ''}`;
      const what = `${missing.length} of ${expected.length} stores${this.rules.storeCodes.length > 0 ? ' asked for' : ' of the latest complete day'} missing (${named})`;
      if (!isSettled(day, this.rules.settleDays, this.rules.now)) {
        this.warn(`${label}: partly published: ${what}; file written with ${tally.stores.size} store${tally.stores.size === 1 ? '' : 's'}, not recorded complete; the next --catch-up asks again`);
        await this.state?.markPending(key, day, { reason: 'partly-published', missingStores: missing.length, stores: tally.stores.size });
        return;
      }
      this.warn(`${label}: ${what}; recorded complete anyway: the day is at least --settle-days ${this.rules.settleDays} days old`);
    }
    const profile: DayProfile = [tally.results, tally.stores.size, tally.rows, totalOf(tally.measure, tally.total)];
    const suspicion = this.rules.onSuspect === 'off' ? undefined : this.suspicionOf(key, day, tally, profile);
    if (suspicion !== undefined) {
      if (this.rules.onSuspect === 'hold') {
        this.warn(
          `${label}: suspect: ${describeSuspicion(suspicion)}; file written, not recorded complete (--on-suspect hold); ` +
            'the next --catch-up asks again, and `accept` settles it if the numbers are right',
        );
        await this.state?.markPending(key, day, { reason: 'suspect', ...suspicion, stores: tally.stores.size });
        return;
      }
      this.warn(`${label}: suspect: ${describeSuspicion(suspicion)}; recorded complete anyway (--on-suspect warn)`);
    }
    await this.state?.markComplete(key, day, [...tally.stores], profile);
  }

  /** Whether the day's numbers look wrong next to the metric's complete days before it. */
  private suspicionOf(key: string, day: UtcDay, tally: DayTally, profile: DayProfile): Suspicion | undefined {
    const figures = { measure: tally.total.measure, total: profile[3], allZero: tally.measure.weight > 0 && tally.measure.nonZero === 0 };
    return suspicionOf(day, figures, this.state?.completeProfiles(key) ?? new Map());
  }

  private warn(line: string): void {
    this.warnings++;
    this.notes.push(line);
  }
}
