import type { MetricName } from '../metrics/descriptors.js';
import type { UnitOutcome } from '../metrics/pipeline.js';
import type { Unit } from '../metrics/unit.js';
import { stateKey, type ImportState } from '../output/state.js';
import { isNotOver, overAt, type DayMode } from '../window/day-mode.js';
import { isSettled, shouldGiveUp, type UtcDay } from '../window/days.js';

interface DayRules {
  readonly storeCodes: readonly string[];
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly now: Date;
  readonly mode: DayMode;
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
 * `complete-anyway`: stores missing but `--settle-days` old; `kept`: a final day re-imported without results.
 */
export type DayNote = { readonly metric: MetricName; readonly day: UtcDay } & (
  | { readonly kind: 'not-over'; readonly until: string; readonly results: number }
  | { readonly kind: 'not-published' }
  | { readonly kind: 'given-up'; readonly giveUpDays: number }
  | { readonly kind: 'partly-published'; readonly missing: MissingStores; readonly stores: number }
  | { readonly kind: 'complete-anyway'; readonly missing: MissingStores; readonly settleDays: number }
  | { readonly kind: 'kept' }
);

/** What the units of one (metric, day) brought, filled in as they are committed. */
interface DayTally {
  left: number;
  failed: boolean;
  results: number;
  readonly stores: Set<string>;
}

/**
 * Judges each (metric, day) once every unit of it is committed (in plan order), and records the judgement in the
 * state: complete when its window is over, it has results, and no store of the metric's latest complete day (with
 * `--store`: no store asked for) is missing; a day `settleDays` old is complete even with stores missing, so a store
 * that closed does not hold the state back. Otherwise the day is pending with its reason, and a day still unpublished
 * `giveUpDays` after its window ended is given up. A day already final stays final. Each day is judged on its own: a
 * pending day never holds later days back. What a judgement has to say is returned as notes, for the report.
 */
export class DayCompletion {
  private readonly tallies = new Map<string, DayTally>();

  constructor(
    private readonly units: readonly Unit[],
    private readonly rules: DayRules,
    private readonly state: ImportState | undefined,
  ) {
    for (const unit of units) {
      const key = `${unit.metric.name} ${unit.day}`;
      const tally = this.tallies.get(key) ?? { left: 0, failed: false, results: 0, stores: new Set<string>() };
      tally.left++;
      this.tallies.set(key, tally);
    }
  }

  /** Before any request: the days of the run are pending until judged, so an interrupted run leaves them pending. */
  async markAsked(): Promise<void> {
    const asked = new Map<string, { key: string; day: UtcDay }>();
    for (const unit of this.units) {
      const key = stateKey(unit.metric.name, this.rules.storeCodes);
      asked.set(`${key} ${unit.day}`, { key, day: unit.day });
    }
    await this.state?.markAsked([...asked.values()]);
  }

  /** Tallies the unit and, when it is its day's last, judges and records the day; returns what that judgement says. */
  async record(outcome: UnitOutcome): Promise<DayNote[]> {
    const { metric, day } = outcome.unit;
    const tally = this.tallies.get(`${metric.name} ${day}`);
    if (tally === undefined) return [];
    if (outcome.ok) {
      tally.results += outcome.data.count - outcome.data.dropped;
      for (const code of outcome.data.storeCodes) tally.stores.add(code);
    } else {
      tally.failed = true;
    }
    if (--tally.left > 0) return [];
    const note = await this.finishDay(metric.name, day, tally);
    return note === undefined ? [] : [note];
  }

  private async finishDay(metric: MetricName, day: UtcDay, tally: DayTally): Promise<DayNote | undefined> {
    const key = stateKey(metric, this.rules.storeCodes);
    if (this.state?.isFinal(key, day)) {
      // Already complete or accepted (a look-back or a backfill): a final day stays final.
      return !tally.failed && tally.results === 0 ? { metric, day, kind: 'kept' } : undefined;
    }
    if (tally.failed) {
      // The failure has been logged with its unit and decides the exit code; the day waits for the next run.
      if (!this.state?.isGivenUp(key, day)) await this.state?.markPending(key, day, { reason: 'failed' });
      return undefined;
    }
    if (isNotOver(day, this.rules.mode, this.rules.now)) {
      // Every local day the window can hold must have ended: until then a store's figures may still change.
      const until = new Date(overAt(day, this.rules.mode)).toISOString().replace('.000Z', 'Z');
      await this.state?.markPending(key, day, { reason: 'not-over', stores: tally.stores.size });
      return { metric, day, kind: 'not-over', until, results: tally.results };
    }
    if (tally.results === 0) {
      if (this.state?.isGivenUp(key, day)) return undefined;
      if (shouldGiveUp(day, this.rules.giveUpDays, this.rules.now)) {
        await this.state?.markGivenUp(key, day);
        return { metric, day, kind: 'given-up', giveUpDays: this.rules.giveUpDays };
      }
      await this.state?.markPending(key, day, { reason: 'not-published', stores: 0 });
      return { metric, day, kind: 'not-published' };
    }
    const askedFor = this.rules.storeCodes.length > 0;
    const expected = askedFor ? this.rules.storeCodes : (this.state?.storeCodes(key) ?? []);
    const codes = expected.filter((code) => !tally.stores.has(code));
    const missing: MissingStores = { codes, expected: expected.length, askedFor };
    if (codes.length > 0 && !isSettled(day, this.rules.settleDays, this.rules.now)) {
      await this.state?.markPending(key, day, { reason: 'partly-published', missingStores: codes.length, stores: tally.stores.size });
      return { metric, day, kind: 'partly-published', missing, stores: tally.stores.size };
    }
    await this.state?.markComplete(key, day, [...tally.stores]);
    return codes.length > 0 ? { metric, day, kind: 'complete-anyway', missing, settleDays: this.rules.settleDays } : undefined;
  }
}
