import type { CalendarDay } from '../window/days.js';
import { isNotOver, overAt, type DayMode } from '../window/day-mode.js';
import { isPastSettleDays, shouldGiveUp } from '../state/judgement/day-rules.js';
import type { ImportState } from '../state/import-state.js';
import type { PendingDay } from '../state/storage/versions/current.js';
import { stateKey } from '../state/keys.js';
import { addSums, emptySums, totalOf, type MeasureSums, type MetricTotal } from '../metrics/measure.js';
import { mergeStoreSums, storeTotals, type StoreSums } from '../metrics/store-sums.js';
import type { DayProfile } from '../state/judgement/day-profile.js';
import { NAMED_STORES, suspicionOf, type Suspicion, type SuspectMode } from '../state/judgement/suspect.js';
import { confirmedByLaterDays, judgeStores } from '../state/judgement/store-rule.js';
import { storeFigures } from '../state/judgement/store-figures.js';
import type { JudgedFigures } from '../state/store-history.js';

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

export interface DayRules {
  readonly storeCodes: readonly string[];
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly now: Date;
  readonly mode: DayMode;
  /** What a complete day whose numbers look wrong does. */
  readonly onSuspect: SuspectMode;
}

/** Which stores a judged day lacks: of those asked for with `--store`, or of the metric's latest complete day. */
export interface MissingStores {
  readonly codes: readonly string[];
  readonly expected: number;
  readonly askedFor: boolean;
}

/**
 * What the judgement of a day has to tell (the report words it): each is a warning about that metric's day.
 * `not-over`: written, pending until every local day in it has ended (`until`); `not-published`: no results yet;
 * `given-up`: no results `giveUpDays` after its window ended; `partly-published`: stores missing, pending;
 * `complete-anyway`: stores missing but `--settle-days` old; `kept`: a final day re-imported without results;
 * `suspect`: complete data whose numbers look wrong, `held` pending (`--on-suspect hold`) or recorded anyway (`warn`);
 * `new-level`: stores whose figure left their range, confirmed as their new level by the days after it (not a warning).
 */
export type DayNote = { readonly metric: string; readonly day: CalendarDay } & (
  | { readonly kind: 'not-over'; readonly until: string; readonly results: number }
  | { readonly kind: 'not-published' }
  | { readonly kind: 'given-up'; readonly giveUpDays: number }
  | { readonly kind: 'partly-published'; readonly missing: MissingStores; readonly stores: number }
  | { readonly kind: 'complete-anyway'; readonly missing: MissingStores; readonly settleDays: number }
  | { readonly kind: 'kept' }
  | { readonly kind: 'new-level'; readonly stores: readonly string[] }
  | {
      readonly kind: 'suspect';
      readonly suspicion: Suspicion;
      readonly held: boolean;
      /** Held already before this run: said in one line per metric with the others, not in full again. */
      readonly again?: true;
    }
);

/** A held suspect day as the state keeps it: the total's figures, and how many stores, which first, what factor. */
function pendingSuspect(suspicion: Suspicion, stores: number): PendingDay {
  return {
    reason: 'suspect',
    measure: suspicion.measure,
    value: suspicion.value,
    ...(suspicion.median === undefined ? {} : { median: suspicion.median }),
    ...(suspicion.allZero ? { allZero: true } : {}),
    ...(suspicion.stores === undefined
      ? {}
      : { suspectStores: suspicion.stores.count, firstStores: suspicion.stores.first.map(({ store }) => store) }),
    ...(suspicion.batch === undefined ? {} : { factor: suspicion.batch.factor }),
    stores,
  };
}

/** What the units of one (metric, day) brought, filled in as they are committed. */
interface DayTally {
  readonly total: MetricTotal;
  left: number;
  failed: boolean;
  results: number;
  rows: number;
  readonly measure: MeasureSums;
  /** Each unit's store sums, made one when the day is judged. */
  readonly storeSums: StoreSums[];
  readonly stores: Set<string>;
}

/**
 * Judges each (metric, day) once every unit of it is committed (in plan order), and records the judgement in the
 * state: complete when its window is over, it has results, and no store of the metric's latest complete day (with
 * `--store`: no store asked for) is missing; a day `settleDays` old is complete even with stores missing, so a store
 * that closed does not hold the state back. A complete day keeps its profile in the state, and one whose numbers look
 * wrong next to the days before it is held pending as `suspect` (or, as `onSuspect` says, recorded with a warning, or
 * not judged). Otherwise the day is pending with its reason, and a day still unpublished `giveUpDays` after its window
 * ended is given up. A day already final stays final. Each day is judged on its own: a pending day never holds later
 * days back. What a judgement has to say is returned as notes, for the report.
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
        stores: new Set<string>(),
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
      for (const code of outcome.data.storeCodes) tally.stores.add(code);
    } else {
      tally.failed = true;
    }
    const notes = --tally.left > 0 ? [] : await this.finishDay(metric.name, day, tally);
    return notes;
  }

  private async finishDay(metric: string, day: CalendarDay, tally: DayTally): Promise<DayNote[]> {
    const key = stateKey(metric, this.rules.storeCodes);
    if (this.state?.isFinal(key, day)) {
      // Already complete or accepted (a look-back or a backfill): a final day stays final.
      return !tally.failed && tally.results === 0 ? [{ metric, day, kind: 'kept' }] : [];
    }
    if (tally.failed) {
      // The failure has been logged with its unit and decides the exit code; the day waits for the next run.
      if (!this.state?.isGivenUp(key, day)) await this.state?.markPending(key, day, { reason: 'failed' });
      return [];
    }
    if (isNotOver(day, this.rules.mode, this.rules.now)) {
      // Every local day the window can hold must have ended: until then a store's figures may still change.
      const until = new Date(overAt(day, this.rules.mode)).toISOString().replace('.000Z', 'Z');
      await this.state?.markPending(key, day, { reason: 'not-over', stores: tally.stores.size });
      return [{ metric, day, kind: 'not-over', until, results: tally.results }];
    }
    if (tally.results === 0) {
      if (this.state?.isGivenUp(key, day)) return [];
      if (shouldGiveUp(day, this.rules.giveUpDays, this.rules.now)) {
        await this.state?.markGivenUp(key, day);
        return [{ metric, day, kind: 'given-up', giveUpDays: this.rules.giveUpDays }];
      }
      await this.state?.markPending(key, day, { reason: 'not-published', stores: 0 });
      return [{ metric, day, kind: 'not-published' }];
    }
    const askedFor = this.rules.storeCodes.length > 0;
    const expected = askedFor ? this.rules.storeCodes : (this.state?.storeCodes(key) ?? []);
    const codes = expected.filter((code) => !tally.stores.has(code));
    const missing: MissingStores = { codes, expected: expected.length, askedFor };
    if (codes.length > 0 && !isPastSettleDays(day, this.rules.settleDays, this.rules.now)) {
      await this.state?.markPending(key, day, { reason: 'partly-published', missingStores: codes.length, stores: tally.stores.size });
      return [{ metric, day, kind: 'partly-published', missing, stores: tally.stores.size }];
    }
    const notes: DayNote[] = codes.length > 0 ? [{ metric, day, kind: 'complete-anyway', missing, settleDays: this.rules.settleDays }] : [];
    const profile: DayProfile = [tally.results, tally.stores.size, tally.rows, totalOf(tally.measure, tally.total)];
    const stores = mergeStoreSums(tally.storeSums);
    const judged = stores.codes;
    const values = storeTotals(stores, tally.total);
    const { suspicion, newLevel } =
      this.rules.onSuspect === 'off' ? { suspicion: undefined, newLevel: [] } : this.suspicionOf(key, day, tally, profile, judged, values);
    // Said only of a day it settles: a day still held for other stores says so instead.
    if (newLevel.length > 0 && suspicion === undefined) notes.push({ metric, day, kind: 'new-level', stores: newLevel });
    // A suspect day's figures are kept out of the history that judges later days until it is accepted; the stores it
    // found, and those at a new level, are one finding each: not judged again for the weeks after it.
    const found = [...(suspicion?.stores?.all ?? []), ...newLevel];
    const figures: JudgedFigures | undefined =
      judged.length === 0 ? undefined : { codes: judged, values, suspect: suspicion !== undefined, found };
    if (suspicion !== undefined) {
      const held = this.rules.onSuspect === 'hold';
      const again = held && this.state?.pendingReason(key, day) === 'suspect';
      notes.push({ metric, day, kind: 'suspect', suspicion, held, ...(again ? { again: true as const } : {}) });
      if (held) {
        await this.state?.markPending(key, day, pendingSuspect(suspicion, tally.stores.size), figures);
        return notes;
      }
    }
    await this.state?.markComplete(key, day, [...tally.stores], profile, figures);
    return notes;
  }

  /**
   * Whether the day's numbers look wrong: its total next to the metric's complete days before it, and each store's
   * figure next to the same store's history. A store's figure the days after it confirm is its new level, not a
   * suspicion (a held day judged again once they are in).
   */
  private suspicionOf(
    key: string,
    day: CalendarDay,
    tally: DayTally,
    profile: DayProfile,
    codes: readonly string[],
    values: Float64Array,
  ): { suspicion: Suspicion | undefined; newLevel: readonly string[] } {
    const figures = { measure: tally.total.measure, total: profile[3], allZero: tally.measure.weight > 0 && tally.measure.nonZero === 0 };
    const byTotal = suspicionOf(day, figures, this.state?.completeProfiles(key) ?? new Map());
    if (this.state === undefined || codes.length === 0) return { suspicion: byTotal, newLevel: [] };
    const history = this.state.storeHistory(key);
    const judgement = judgeStores(day, storeFigures(codes, values), history, this.state.foundStores(key, day));
    // Where stores could be judged, they judge the day: a chain that grows or closes stores moves its total for good,
    // and that is the new normal, not a suspicion. Every value zero is one still (it needs no history).
    const total = judgement.judged > 0 && !byTotal?.allZero ? undefined : byTotal;
    // A whole day moved by one factor is the vendor's batch whatever came after; a store's move can be its new level.
    const confirmed = judgement.batch === undefined ? confirmedByLaterDays(day, history, judgement.stores) : new Set<string>();
    const stores = judgement.stores.filter(({ store }) => !confirmed.has(store));
    const newLevel = [...confirmed];
    if (judgement.batch === undefined && stores.length === 0) return { suspicion: total, newLevel };
    const suspicion: Suspicion = {
      ...(total ?? { measure: tally.total.measure, value: profile[3] }),
      ...(judgement.batch === undefined ? {} : { batch: judgement.batch }),
      ...(stores.length === 0
        ? {}
        : { stores: { count: stores.length, first: stores.slice(0, NAMED_STORES), all: stores.map(({ store }) => store) } }),
    };
    return { suspicion, newLevel };
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
