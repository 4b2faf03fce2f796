import { UsageError } from '../errors.js';
import { rangesHold, withDays, withoutDays } from '../window/day-ranges.js';
import { addDays, type CalendarDay } from '../window/days.js';
import type { Layout } from '../output/layout.js';
import type { DayMode } from '../window/day-mode.js';
import { isFinal, keyCoverageOf, type KeyCoverage } from './coverage.js';
import type { DayProfile } from './judgement/day-profile.js';
import { addSettings, type KeptSettings, refuseOtherSettings, settleSettings } from './storage/kept-settings.js';
import { STATE_BOUNDS } from './storage/state-bounds.js';
import { checkWritable, emptyState, parseState, readState, type StateLoadOptions } from './storage/state-file.js';
import { formatState } from './storage/state-text.js';
import type { StateStorage } from './storage/storage.js';
import { decodeStoreSet, encodeStoreSet, pruneStoreSets, storeSetId } from './storage/store-sets.js';
import type { StoreFigures } from './judgement/store-figures.js';
import type { DayOutcome } from './judgement/verdict.js';
import { DecodedFigures, foundStores, recordFigures, storeHistory, type JudgedFigures } from './store-history.js';
import { lastRunSchema, type LastRun, type PendingDay, type StateEntry, type StateFile } from './storage/versions/current.js';

/**
 * The record `--catch-up`, `status`, `accept` and `reopen` work from: per metric (and store selection) its coverage
 * (complete, accepted, given-up and pending days), the stores of its latest complete day, and the last run.
 *
 * Several runs may write one state at the same time (two cron lines, a backfill during the nightly run). Every change
 * is a read-merge-write through the storage: the state is read again, only this change is applied, and it is
 * replaced atomically. So no run loses another's keys, and a final day never becomes pending again by itself.
 */
export class ImportState {
  private readonly storeSetCache = new Map<string, readonly string[]>();
  /** Per key, the store figures decoded so far: each day's once a run, not once a judged day. */
  private readonly decodedFigures = new Map<string, DecodedFigures>();

  private constructor(
    readonly storage: StateStorage,
    private file: StateFile,
    private readonly options: StateLoadOptions,
    /** What the reader set aside as it loaded the state (a last-run record it could not read), to be said once. */
    readonly warnings: readonly string[] = [],
  ) {}

  get path(): string {
    return this.storage.location;
  }

  /** Reads and checks the state; none means an empty state. Anything unusable is a usage error naming the value. */
  static async load(store: StateStorage, options: StateLoadOptions): Promise<ImportState> {
    const { file, warnings } = readState(await store.read(), store.location, options);
    if (file !== undefined) refuseOtherSettings(file, options, store.location);
    // From here on the state's own settings are the run's: its first change records them in a new state.
    return new ImportState(store, file ?? emptyState(), { ...options, ...settleSettings(file, options) }, warnings);
  }

  /** The state's day mode: UTC days unless a local-mode run created it. */
  get dayMode(): DayMode {
    return this.options.mode ?? this.file.days ?? 'utc';
  }

  /** The state's file layout: flat unless a hive-layout run created it. */
  get layout(): Layout {
    return this.options.layout ?? this.file.layout ?? 'flat';
  }

  /** The state's file format; undefined when no run has recorded one (every earlier release). */
  get format(): KeptSettings['format'] {
    return this.options.format ?? this.file.format;
  }

  /** Like `load`, but no state is an error too (for `status`, which only reads). */
  static async loadExisting(store: StateStorage, options: StateLoadOptions): Promise<ImportState> {
    const { file, warnings } = readState(await store.read(), store.location, options);
    if (file === undefined) {
      throw new UsageError(
        store.absence ?? `no state file at ${store.location}: nothing has been imported into it yet (or pass --state <file>)`,
      );
    }
    return new ImportState(store, file, options, warnings);
  }

  keys(): string[] {
    return Object.keys(this.file.metrics).sort();
  }

  lastRun(): LastRun | undefined {
    return this.file.lastRun;
  }

  coverage(key: string): KeyCoverage {
    return keyCoverageOf(this.file.metrics[key] ?? {});
  }

  /** The latest complete day. */
  lastCompleteDay(key: string): CalendarDay | undefined {
    return this.file.metrics[key]?.complete?.at(-1)?.[1];
  }

  isFinal(key: string, day: CalendarDay): boolean {
    const entry = this.file.metrics[key];
    return entry !== undefined && isFinal(entry, day);
  }

  /** Why a day is pending, if it is. */
  pendingReason(key: string, day: CalendarDay): PendingDay['reason'] | undefined {
    return this.file.metrics[key]?.pending?.[day]?.reason;
  }

  isGivenUp(key: string, day: CalendarDay): boolean {
    return rangesHold(this.file.metrics[key]?.givenUp ?? [], day);
  }

  /** How many stores reported on the latest complete day. */
  storeCount(key: string): number | undefined {
    return this.file.metrics[key]?.stores;
  }

  /** The store codes of the latest complete day, sorted; undefined when no day is complete (or none were kept). */
  storeCodes(key: string): readonly string[] | undefined {
    const id = this.file.metrics[key]?.storeSet;
    if (id === undefined) return undefined;
    let codes = this.storeSetCache.get(id);
    if (codes === undefined) {
      codes = decodeStoreSet(this.file.storeSets[id], this.path, id, this.file.metrics[key]?.stores);
      this.storeSetCache.set(id, codes);
    }
    return codes;
  }

  /**
   * The profiles of the key's complete days, by day: what a new day's numbers are judged by. A day reopened or
   * accepted since is not among them.
   */
  completeProfiles(key: string): ReadonlyMap<CalendarDay, DayProfile> {
    const entry = this.file.metrics[key];
    const profiles = new Map<CalendarDay, DayProfile>();
    for (const [day, profile] of Object.entries(entry?.profiles ?? {}))
      if (rangesHold(entry?.complete ?? [], day)) profiles.set(day, profile);
    return profiles;
  }

  /** Each store's figures of the days that judge later ones (see `storeHistory`), decoded as the rule asks. */
  storeHistory(key: string): (day: CalendarDay) => StoreFigures | undefined {
    return storeHistory(this.file, this.file.metrics[key], this.path, this.decodedOf(key));
  }

  private decodedOf(key: string): DecodedFigures {
    let decoded = this.decodedFigures.get(key);
    if (decoded === undefined) {
      decoded = new DecodedFigures();
      this.decodedFigures.set(key, decoded);
    }
    return decoded;
  }

  /**
   * Each store's figures of every day judged, held ones too: where a store's zeros are its weekly rhythm (a store
   * closed on Sundays is held its first Sunday; from the second on, that Sunday shows the rhythm).
   */
  recordedFigures(key: string): (day: CalendarDay) => StoreFigures | undefined {
    const entry = this.file.metrics[key];
    const decoded = this.decodedOf(key);
    return (day) => {
      const kept = entry?.storeFigures?.[day];
      return kept === undefined ? undefined : decoded.figuresOf(this.file, this.path, day, kept);
    };
  }

  /**
   * The profile a day was recorded complete with: of a complete day, or of a day the vendor changed since and whose
   * correction is held (the numbers it was final with, kept until it settles).
   */
  profileOf(key: string, day: CalendarDay): DayProfile | undefined {
    return this.file.metrics[key]?.profiles?.[day];
  }

  /** Records a day's verdict (`judgeDay`): the one place a judged day's standing changes. */
  async record(key: string, day: CalendarDay, outcome: DayOutcome): Promise<void> {
    switch (outcome.kind) {
      case 'kept':
        return;
      case 'given-up':
        return this.markGivenUp(key, day);
      case 'complete':
        return this.markComplete(key, day, outcome.stores, outcome.profile, outcome.figures);
      case 'pending':
        if (outcome.correction) await this.holdCorrection(key, day, outcome.status, outcome.figures);
        else await this.markPending(key, day, outcome.status, outcome.figures);
    }
  }

  /** The stores a suspect day of the weeks before `day` already found (see `foundStores`). */
  foundStores(key: string, day: CalendarDay): ReadonlySet<string> {
    return foundStores(this.file.metrics[key], day);
  }

  /**
   * Records `day` complete with the stores it had (no longer pending, given up or accepted), and its profile and its
   * stores' figures when it has them. The stores become the expectation for other days when `day` is the latest
   * complete one.
   */
  async markComplete(
    key: string,
    day: CalendarDay,
    storeCodes: readonly string[],
    profile?: DayProfile,
    figures?: JudgedFigures,
  ): Promise<void> {
    await this.update((file) => {
      const entry = cleared(file.metrics[key] ?? {}, [day]);
      if (figures !== undefined) recordFigures(file, entry, day, figures);
      const latest = entry.complete?.at(-1)?.[1];
      entry.complete = withDays(entry.complete ?? [], [day]);
      if (profile !== undefined) entry.profiles = lastYearOf({ ...entry.profiles, [day]: [...profile] });
      if (latest === undefined || day >= latest) {
        const sorted = ascending(storeCodes) ? storeCodes : [...new Set(storeCodes)].sort();
        const id = storeSetId(sorted);
        if (file.storeSets[id] === undefined) file.storeSets[id] = encodeStoreSet(sorted);
        this.storeSetCache.set(id, sorted);
        entry.stores = sorted.length;
        entry.storeSet = id;
      }
      file.metrics[key] = entry;
      return true;
    });
  }

  /**
   * Notes why a day is not final, with its stores' figures when it was judged suspect; a final day stays final (a
   * look-back that meets a hiccup changes nothing).
   */
  async markPending(key: string, day: CalendarDay, status: PendingDay, figures?: JudgedFigures): Promise<boolean> {
    return this.update((file) => {
      const entry = file.metrics[key] ?? {};
      if (isFinal(entry, day)) return false;
      // A correction (of a reopened day, or held already) keeps the profile the day was final with while it is held.
      const was = entry.pending?.[day]?.reason;
      const correction = (was === 'suspect' || was === 'reopened') && status.reason === 'suspect' ? entry.profiles?.[day] : undefined;
      const next = cleared(entry, [day]);
      if (correction !== undefined) next.profiles = { ...next.profiles, [day]: correction };
      if (figures !== undefined) recordFigures(file, next, day, figures);
      (next.pending ??= {})[day] = { ...status };
      file.metrics[key] = next;
      return true;
    });
  }

  /**
   * A correction of a complete day that looks wrong: the day is pending (`suspect`) again, keeping the profile it was
   * final with, which names it a correction until it settles. A day a person accepted meanwhile stays accepted.
   */
  private async holdCorrection(key: string, day: CalendarDay, status: PendingDay, figures?: JudgedFigures): Promise<void> {
    await this.update((file) => {
      const entry = file.metrics[key] ?? {};
      if (rangesHold(entry.accepted ?? [], day)) return false;
      const profile = entry.profiles?.[day];
      const next = cleared(entry, [day]);
      if (figures !== undefined) recordFigures(file, next, day, figures);
      (next.pending ??= {})[day] = { ...status };
      if (profile !== undefined) next.profiles = { ...next.profiles, [day]: profile };
      file.metrics[key] = next;
      return true;
    });
  }

  /**
   * Before a run fetches anything: the days it was asked for that are not final are pending (`asked`) until they are
   * judged, so a run killed half-way leaves them to the next `--catch-up`. A day already pending keeps its reason, a
   * given-up day stays given up.
   */
  async markAsked(days: readonly { readonly key: string; readonly day: CalendarDay }[]): Promise<void> {
    await this.update((file) => {
      let changed = false;
      for (const { key, day } of days) {
        const entry = (file.metrics[key] ??= {});
        if (isFinal(entry, day) || rangesHold(entry.givenUp ?? [], day) || entry.pending?.[day] !== undefined) continue;
        (entry.pending ??= {})[day] = { reason: 'asked' };
        changed = true;
      }
      return changed;
    });
  }

  /**
   * After a run that ended before judging these days (a signal, a rejected credential, a full disk): those still
   * `asked` become `interrupted`. A day another run has judged since keeps that judgement.
   */
  async markInterrupted(days: readonly { readonly key: string; readonly day: CalendarDay }[]): Promise<void> {
    await this.update((file) => {
      let changed = false;
      for (const { key, day } of days) {
        const pending = file.metrics[key]?.pending;
        if (pending?.[day]?.reason !== 'asked') continue;
        pending[day] = { reason: 'interrupted' };
        changed = true;
      }
      return changed;
    });
  }

  /** Records a day that never came as given up: not asked for again, still a gap until it is accepted. */
  async markGivenUp(key: string, day: CalendarDay): Promise<void> {
    await this.update((file) => {
      const entry = cleared(file.metrics[key] ?? {}, [day]);
      entry.givenUp = withDays(entry.givenUp ?? [], [day]);
      file.metrics[key] = entry;
      return true;
    });
  }

  /** Records the days as final whatever their data (complete days stay complete). */
  async accept(key: string, days: readonly CalendarDay[]): Promise<void> {
    await this.update((file) => {
      const current = file.metrics[key] ?? {};
      const open = days.filter((day) => !rangesHold(current.complete ?? [], day));
      const entry = cleared(current, open);
      entry.accepted = withDays(entry.accepted ?? [], open);
      file.metrics[key] = entry;
      return true;
    });
  }

  /**
   * Makes the days pending again (`reopened`), so the next `--catch-up` imports them. A complete day keeps the profile
   * it was final with: if the vendor's new numbers are held, they are held as a correction of it.
   */
  async reopen(key: string, days: readonly CalendarDay[]): Promise<void> {
    await this.update((file) => {
      const before = file.metrics[key] ?? {};
      const finalProfiles = days.flatMap((day) => {
        const profile = before.profiles?.[day];
        return profile !== undefined && rangesHold(before.complete ?? [], day) ? [[day, profile] as const] : [];
      });
      const entry = cleared(before, days);
      if (finalProfiles.length > 0) entry.profiles = { ...entry.profiles, ...Object.fromEntries(finalProfiles) };
      const pending = (entry.pending ??= {});
      for (const day of days) pending[day] = { reason: 'reopened' };
      file.metrics[key] = entry;
      return true;
    });
  }

  /** Records the run; a count the schema would refuse (a bug, or a number from outside) is left out, never written. */
  async recordRun(run: LastRun): Promise<void> {
    await this.update((file) => {
      file.lastRun = recordable(run);
      return true;
    });
  }

  /** Read-merge-write through the storage; `change` edits the freshly read state and says whether it changed it. */
  private async update<T extends boolean | void>(change: (file: StateFile) => T): Promise<T> {
    let result!: T;
    const changed = (read: StateFile | undefined): StateFile | undefined => {
      // A run of the other mode or layout may have created the state since it was loaded: its files are not this run's.
      if (read !== undefined) refuseOtherSettings(read, this.options, this.path);
      const file = read ?? emptyState();
      const settingsAdded = addSettings(file, this.options);
      result = change(file);
      this.file = file;
      if (result === false && !settingsAdded) return undefined;
      pruneStoreSets(file);
      checkWritable(file, this.path);
      return file;
    };
    const parse = (text: string | undefined) => parseState(text, this.path, this.options);
    if (this.storage.updateState !== undefined) await this.storage.updateState(changed, parse);
    else
      await this.storage.update((text) => {
        const file = changed(parse(text));
        return file === undefined ? undefined : formatState(file);
      });
    return result;
  }
}

/** The run without the optional counts the schema refuses (its time, command, exit code and rows are the run's own). */
function recordable(run: LastRun): LastRun {
  if (lastRunSchema.safeParse(run).success) return run;
  const kept: LastRun = { time: run.time, command: run.command, exitCode: run.exitCode, rows: run.rows };
  const counts = { requests: run.requests, throttled: run.throttled, paceRps: run.paceRps };
  for (const [name, value] of Object.entries(counts)) {
    if (value !== undefined && lastRunSchema.safeParse({ ...kept, [name]: value }).success) Object.assign(kept, { [name]: value });
  }
  return kept;
}

/**
 * Takes the days out of every list of the entry (which belongs to a freshly read state, so it is changed in place),
 * so that each day has one status; returns it.
 */
function cleared(entry: StateEntry, days: readonly CalendarDay[]): StateEntry {
  // Lists that hold none of the days are kept as they are: a long backfill changes one day at a time.
  for (const list of ['complete', 'accepted', 'givenUp'] as const) {
    const ranges = entry[list];
    if (ranges === undefined || !days.some((day) => rangesHold(ranges, day))) continue;
    const rest = withoutDays(ranges, days);
    if (rest.length > 0) entry[list] = rest;
    else delete entry[list];
  }
  // Each map keeps only the days of one status: pending days, and complete days' profiles.
  for (const map of ['pending', 'profiles'] as const) {
    const byDay = entry[map];
    if (byDay === undefined) continue;
    for (const day of days) delete byDay[day];
    if (Object.keys(byDay).length === 0) delete entry[map];
  }
  return entry;
}

/** Whether the codes are already as sorting them without repeats makes them (a day's stores most often are). */
function ascending(codes: readonly string[]): boolean {
  for (let index = 1; index < codes.length; index++) if (!(codes[index - 1]! < codes[index]!)) return false;
  return true;
}

/** Profiles of more than a year before the newest are dropped: the file stays bounded however long it runs. */
function lastYearOf<T>(profiles: Record<CalendarDay, T>): Record<CalendarDay, T> {
  const days = Object.keys(profiles).sort();
  const oldest = addDays(days.at(-1)!, -PROFILE_DAYS + 1);
  for (const day of days) {
    if (day >= oldest) break;
    delete profiles[day];
  }
  return profiles;
}

/** How many days of profiles a key keeps: a year, far more than the four weeks a day is judged by. */
const PROFILE_DAYS = STATE_BOUNDS.profileDays;
