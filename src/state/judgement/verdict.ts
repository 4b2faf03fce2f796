import type { CalendarDay } from '../../window/days.js';
import { isNotOver, type DayMode } from '../../window/day-mode.js';
import type { JudgedFigures } from '../store-history.js';
import type { PendingDay } from '../storage/versions/current.js';
import type { DayProfile } from './day-profile.js';
import { isPastSettleDays, overAtText, shouldGiveUp } from './day-rules.js';
import { figureCode, storeFigures, type StoreFigures } from './store-figures.js';
import { closingDays, confirmedByLaterDays, judgeStores } from './store-rule.js';
import { NAMED_STORES, suspicionOf, type Suspicion, type SuspectMode } from './suspect.js';

/** The flags and the moment a day is judged by. */
export interface DayRules {
  readonly storeCodes: readonly string[];
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly now: Date;
  readonly mode: DayMode;
  /** What a complete day whose numbers look wrong does. */
  readonly onSuspect: SuspectMode;
}

/** What a (metric, day)'s units brought, added up: the verdict's one input from the import. */
export interface DayFigures {
  /** A unit of the day failed: the day waits for the next run. */
  readonly failed: boolean;
  /** Results of the day (those of neighbouring local days left out). */
  readonly results: number;
  /** The stores that reported. */
  readonly stores: readonly string[];
  /** Results, stores, rows and the metric's total. */
  readonly profile: DayProfile;
  /** What the total is (`sum of unique_users`), and whether every value of the day was zero. */
  readonly measure: string;
  readonly allZero: boolean;
  /** Each store's figure: the codes sorted, the values in their order. */
  readonly storeCodes: readonly string[];
  readonly storeValues: Float64Array;
}

/** What judging a day reads of the state, and nothing else: a state file, or a table in a test. */
export interface StateView {
  isFinal(key: string, day: CalendarDay): boolean;
  isGivenUp(key: string, day: CalendarDay): boolean;
  pendingReason(key: string, day: CalendarDay): PendingDay['reason'] | undefined;
  /** The stores of the latest complete day. */
  storeCodes(key: string): readonly string[] | undefined;
  completeProfiles(key: string): ReadonlyMap<CalendarDay, DayProfile>;
  /** The profile a day was recorded with when it became complete (kept while a correction of it is held). */
  profileOf(key: string, day: CalendarDay): DayProfile | undefined;
  /** Figures of the days that judge others (complete, not suspect, or accepted). */
  storeHistory(key: string): (day: CalendarDay) => StoreFigures | undefined;
  /** Figures of every day judged, held ones too: where a store's zeros are its rhythm. */
  recordedFigures(key: string): (day: CalendarDay) => StoreFigures | undefined;
  foundStores(key: string, day: CalendarDay): ReadonlySet<string>;
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
 * `suspect`: complete data whose numbers look wrong, `held` pending (`--on-suspect hold`) or recorded anyway (`warn`),
 * `correction` when the day was final and the vendor changed it; not warnings: `new-level`, stores whose figure left
 * their range, confirmed as their new level by the days after it; `settled`, a day held as suspect whose numbers now
 * look right (the vendor's correction, or the days after it show a zero to be the store's closing day).
 */
export type DayNote = { readonly metric: string; readonly day: CalendarDay } & (
  | { readonly kind: 'not-over'; readonly until: string; readonly results: number }
  | { readonly kind: 'not-published' }
  | { readonly kind: 'given-up'; readonly giveUpDays: number }
  | { readonly kind: 'partly-published'; readonly missing: MissingStores; readonly stores: number }
  | { readonly kind: 'complete-anyway'; readonly missing: MissingStores; readonly settleDays: number }
  | { readonly kind: 'kept' }
  | { readonly kind: 'new-level'; readonly stores: readonly string[] }
  | { readonly kind: 'settled'; readonly correction?: true }
  | {
      readonly kind: 'suspect';
      readonly suspicion: Suspicion;
      readonly held: boolean;
      /** Held already before this run: said in one line per metric with the others, not in full again. */
      readonly again?: true;
      /** The day was final: the vendor's data changed since. */
      readonly correction?: true;
    }
);

/**
 * What the state is to record of a day: nothing (`kept`: a final day stays final, a given-up one given up), pending
 * with its reason (a `correction` takes a final day back), given up, or complete with its stores and profile.
 */
export type DayOutcome =
  | { readonly kind: 'kept' }
  | { readonly kind: 'pending'; readonly status: PendingDay; readonly figures?: JudgedFigures; readonly correction?: true }
  | { readonly kind: 'given-up' }
  | { readonly kind: 'complete'; readonly stores: readonly string[]; readonly profile: DayProfile; readonly figures?: JudgedFigures };

export interface Verdict {
  readonly outcome: DayOutcome;
  readonly notes: readonly DayNote[];
}

/** Where the verdict is about: the state's key (metric and store selection), the metric's name and the day. */
export interface DayPlace {
  readonly key: string;
  readonly metric: string;
  readonly day: CalendarDay;
}

const KEPT: DayOutcome = { kind: 'kept' };

/**
 * The verdict on a day whose units are all in: complete when its window is over, it has results, and no store of the
 * metric's latest complete day (with `--store`: no store asked for) is missing; a day `settleDays` old is complete
 * even with stores missing, so a store that closed does not hold the state back. A complete day whose numbers look
 * wrong next to the days before it is held pending as `suspect` (or, as `onSuspect` says, recorded with a warning, or
 * not judged). Otherwise the day is pending with its reason, and a day still unpublished `giveUpDays` after its window
 * ended is given up. A day already final stays final, unless it was complete and its figures changed (the vendor's
 * correction, met by a look-back): that is judged as a new day, and held if it looks wrong. Pure: the state is read
 * through `view` (none: no state, nothing known), and the verdict is recorded by `ImportState.record`.
 */
export function judgeDay(place: DayPlace, figures: DayFigures, rules: DayRules, view: StateView | undefined): Verdict {
  const { key, metric, day } = place;
  const at = { metric, day };
  if (view?.isFinal(key, day)) {
    if (figures.failed) return { outcome: KEPT, notes: [] };
    if (figures.results === 0) return { outcome: KEPT, notes: [{ ...at, kind: 'kept' }] };
    return judgeCorrection(place, figures, rules, view);
  }
  if (figures.failed) {
    // The failure has been logged with its unit and decides the exit code; the day waits for the next run.
    return { outcome: view?.isGivenUp(key, day) ? KEPT : { kind: 'pending', status: { reason: 'failed' } }, notes: [] };
  }
  if (isNotOver(day, rules.mode, rules.now)) {
    // Every local day the window can hold must have ended: until then a store's figures may still change.
    const until = overAtText(day, rules.mode);
    return {
      outcome: { kind: 'pending', status: { reason: 'not-over', stores: figures.stores.length } },
      notes: [{ ...at, kind: 'not-over', until, results: figures.results }],
    };
  }
  if (figures.results === 0) {
    if (view?.isGivenUp(key, day)) return { outcome: KEPT, notes: [] };
    if (shouldGiveUp(day, rules.giveUpDays, rules.now))
      return { outcome: { kind: 'given-up' }, notes: [{ ...at, kind: 'given-up', giveUpDays: rules.giveUpDays }] };
    return { outcome: { kind: 'pending', status: { reason: 'not-published', stores: 0 } }, notes: [{ ...at, kind: 'not-published' }] };
  }
  const askedFor = rules.storeCodes.length > 0;
  const expected = askedFor ? rules.storeCodes : (view?.storeCodes(key) ?? []);
  const codes = missingCodes(expected, figures.stores);
  const missing: MissingStores = { codes, expected: expected.length, askedFor };
  if (codes.length > 0 && !isPastSettleDays(day, rules.settleDays, rules.now)) {
    return {
      outcome: { kind: 'pending', status: { reason: 'partly-published', missingStores: codes.length, stores: figures.stores.length } },
      notes: [{ ...at, kind: 'partly-published', missing, stores: figures.stores.length }],
    };
  }
  const notes: DayNote[] = codes.length > 0 ? [{ ...at, kind: 'complete-anyway', missing, settleDays: rules.settleDays }] : [];
  const reason = view?.pendingReason(key, day);
  const wasHeld = reason === 'suspect';
  // A correction held already, or a day reopened after it was final, keeps the profile it was final with: the
  // reopened day's new numbers are a correction when they differ from it.
  const before = wasHeld || reason === 'reopened' ? view?.profileOf(key, day) : undefined;
  const correction = before !== undefined && (wasHeld || !sameProfile(before, figures.profile));
  return judgeNumbers(place, figures, rules, view, { notes, wasHeld, correction });
}

/**
 * A final day fetched again. Unchanged (its profile and store figures as recorded), or accepted by a person, or with
 * nothing kept to compare (a state of an earlier release), it stays final as it is. Changed, it is judged by the
 * same numbers as a new day: a day that would be held is held as a correction; a plausible one is recorded complete
 * with its new figures, so that the look-back of the next night finds it unchanged.
 */
function judgeCorrection(place: DayPlace, figures: DayFigures, rules: DayRules, view: StateView): Verdict {
  const before = view.profileOf(place.key, place.day);
  if (rules.onSuspect === 'off' || before === undefined) return { outcome: KEPT, notes: [] };
  const recorded = view.recordedFigures(place.key)(place.day);
  if (sameProfile(before, figures.profile) && (recorded === undefined || sameFigures(recorded, figures)))
    return { outcome: KEPT, notes: [] };
  return judgeNumbers(place, figures, rules, view, { notes: [], wasHeld: false, correction: true });
}

/** Whether a day's numbers look wrong, and so whether it is held (see `judgeDay`). */
function judgeNumbers(
  place: DayPlace,
  figures: DayFigures,
  rules: DayRules,
  view: StateView | undefined,
  context: { readonly notes: readonly DayNote[]; readonly wasHeld: boolean; readonly correction: boolean },
): Verdict {
  const { metric, day } = place;
  const notes = [...context.notes];
  const judged = figures.storeCodes;
  const { suspicion, newLevel } = rules.onSuspect === 'off' ? { suspicion: undefined, newLevel: [] } : suspicionOfDay(place, figures, view);
  // Said only of a day it settles: a day still held for other stores says so instead.
  if (newLevel.length > 0 && suspicion === undefined) notes.push({ metric, day, kind: 'new-level', stores: newLevel });
  // A suspect day's figures are kept out of the history that judges later days until it is accepted; the stores it
  // found, and those at a new level, are one finding each: not judged again for the weeks after it.
  const found = [...(suspicion?.stores?.all ?? []), ...newLevel];
  const kept: JudgedFigures | undefined =
    judged.length === 0 ? undefined : { codes: judged, values: figures.storeValues, suspect: suspicion !== undefined, found };
  const correction = context.correction ? { correction: true as const } : {};
  if (suspicion !== undefined) {
    const held = rules.onSuspect === 'hold';
    const again = held && context.wasHeld;
    notes.push({ metric, day, kind: 'suspect', suspicion, held, ...(again ? { again: true as const } : {}), ...correction });
    if (held)
      return {
        outcome: { kind: 'pending', status: pendingSuspect(suspicion, figures.stores.length), figures: kept, ...correction },
        notes,
      };
  } else if (context.wasHeld && newLevel.length === 0) {
    notes.push({ metric, day, kind: 'settled', ...correction });
  }
  return {
    outcome: { kind: 'complete', stores: figures.stores, profile: figures.profile, ...(kept === undefined ? {} : { figures: kept }) },
    notes,
  };
}

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

/**
 * Whether the day's numbers look wrong: its total next to the metric's complete days before it, and each store's
 * figure next to the same store's history. A store's figure the days after it confirm is its new level, not a
 * suspicion (a held day judged again once they are in). Every value zero is a suspicion unless each store is at zero
 * on its weekly closing day.
 */
function suspicionOfDay(
  place: DayPlace,
  figures: DayFigures,
  view: StateView | undefined,
): { suspicion: Suspicion | undefined; newLevel: readonly string[] } {
  const { key, day } = place;
  const { storeCodes: codes, storeValues: values } = figures;
  const total = figures.profile[3];
  const byTotal = suspicionOf(day, { measure: figures.measure, total, allZero: figures.allZero }, view?.completeProfiles(key) ?? new Map());
  if (view === undefined || codes.length === 0) return { suspicion: byTotal, newLevel: [] };
  const history = view.storeHistory(key);
  const dayFigures = storeFigures(codes, values);
  const closing = closingDays(day, dayFigures, view.recordedFigures(key));
  const judgement = judgeStores(day, dayFigures, history, new Set([...view.foundStores(key, day), ...closing]));
  // Where stores could be judged, they judge the day: a chain that grows or closes stores moves its total for good,
  // and that is the new normal, not a suspicion. Every value zero is one still (it needs no history), unless every
  // store is at its weekly closing day: a key of one store closed on Sundays is zero every Sunday.
  const everyStoreClosing = codes.every((code) => closing.has(code));
  const totalSuspicion = byTotal?.allZero ? (everyStoreClosing ? undefined : byTotal) : judgement.judged > 0 ? undefined : byTotal;
  // A whole day moved by one factor is the vendor's batch whatever came after; a store's move can be its new level.
  const confirmed = judgement.batch === undefined ? confirmedByLaterDays(day, history, judgement.stores) : new Set<string>();
  const stores = judgement.stores.filter(({ store }) => !confirmed.has(store));
  const newLevel = [...confirmed];
  if (judgement.batch === undefined && stores.length === 0) return { suspicion: totalSuspicion, newLevel };
  const suspicion: Suspicion = {
    ...(totalSuspicion ?? { measure: figures.measure, value: total }),
    ...(judgement.batch === undefined ? {} : { batch: judgement.batch }),
    ...(stores.length === 0
      ? {}
      : { stores: { count: stores.length, first: stores.slice(0, NAMED_STORES), all: stores.map(({ store }) => store) } }),
  };
  return { suspicion, newLevel };
}

/** The expected stores a day did not report, in their order. */
function missingCodes(expected: readonly string[], reported: readonly string[]): string[] {
  // The usual day reports the stores expected, in the same order: no set of 20,000 codes a judged day.
  let same = expected.length <= reported.length;
  for (let index = 0; same && index < expected.length; index++) same = expected[index] === reported[index];
  if (same) return [];
  const stores = new Set(reported);
  return expected.filter((code) => !stores.has(code));
}

function sameProfile(a: DayProfile, b: DayProfile): boolean {
  return a.every((value, index) => value === b[index]);
}

/** The same stores with the same figures, as the state keeps them (two bytes a store). */
function sameFigures(recorded: StoreFigures, figures: DayFigures): boolean {
  const { storeCodes: codes, storeValues: values } = figures;
  if (recorded.codes.length !== codes.length) return false;
  return codes.every((code, index) => recorded.codes[index] === code && figureCode(recorded.values[index]!) === figureCode(values[index]!));
}
