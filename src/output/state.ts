import { createHash } from 'node:crypto';
import { lstat, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { z } from 'zod';
import { errnoCode, UsageError } from '../errors.js';
import { boundedMemo } from '../memo.js';
import { daysOfRanges, rangesHold, rangesOfDays, withDays, withoutDays, type DayRange } from '../window/day-ranges.js';
import { addDays, isValidDay, today, type UtcDay } from '../window/days.js';
import { DAY_MODES, type DayMode } from '../window/day-mode.js';
import { makeFolder, writeFileAtomic } from './atomic-file.js';
import { LAYOUTS, type Layout } from './layout.js';
import { asOutputError } from './write-failure.js';
import { isProcessAlive } from './stale-temp.js';

export const STATE_FILE_NAME = '.area-metrics-state.json';
/** The format this release writes; versions 1 and 2 (earlier releases) are read and upgraded on the next write. */
export const STATE_VERSION = 3;

/**
 * Why a day is not final yet. The first three are the vendor's (judged from the data), `failed` and `interrupted` the
 * run's (a unit failed, or the run ended before the day was judged), `reopened` a person's (`area-metrics reopen`).
 */
export const PENDING_REASONS = ['not-published', 'partly-published', 'not-over', 'failed', 'interrupted', 'reopened'] as const;
export type PendingReason = (typeof PENDING_REASONS)[number];

export interface PendingDay {
  readonly reason: PendingReason;
  /** With `partly-published`: stores of the metric's latest complete day that this window lacks. */
  readonly missingStores?: number;
  /** Stores the window had. */
  readonly stores?: number;
}

const pendingSchema = z.strictObject({
  reason: z.enum(PENDING_REASONS),
  missingStores: z.number().int().min(0).optional(),
  stores: z.number().int().min(0).optional(),
});

const rangeSchema = z.tuple([z.string(), z.string()]);

const entrySchema = z.strictObject({
  /** Days whose data is final, as ranges. */
  complete: z.array(rangeSchema).optional(),
  /** Days settled by hand as final whatever their data (`area-metrics accept`). */
  accepted: z.array(rangeSchema).optional(),
  /** Days still unpublished `--give-up-days` after their window ended: no longer asked for, but still a gap. */
  givenUp: z.array(rangeSchema).optional(),
  /** Days asked for that are not final, and why. */
  pending: z.record(z.string(), pendingSchema).optional(),
  /** How many stores reported on the latest complete day, and which: the id of a set in `storeSets`. */
  stores: z.number().int().min(0).optional(),
  storeSet: z.string().optional(),
});

const lastRunSchema = z.strictObject({
  /** When the run ended, ISO 8601 UTC. */
  time: z.string(),
  command: z.string(),
  exitCode: z.number().int().min(0),
  /** Rows written per metric. */
  rows: z.record(z.string(), z.number().int().min(0)),
  /** Requests the run sent (retries included), the 429s among the answers, and the pace it reached (requests a second). */
  requests: z.number().int().min(0).optional(),
  throttled: z.number().int().min(0).optional(),
  paceRps: z.number().positive().optional(),
});

const v3Schema = z.strictObject({
  version: z.literal(3),
  metrics: z.record(z.string(), entrySchema),
  /**
   * Store code sets by id, each the sorted codes as a JSON array, deflated and Base64-encoded: a chain of 20,000
   * stores costs tens of kilobytes instead of hundreds, and metrics with the same stores share one set.
   */
  storeSets: z.record(z.string(), z.string()),
  lastRun: lastRunSchema.optional(),
  /** `local`: its days are store-local calendar days; absent: UTC days (every earlier release). */
  days: z.enum(DAY_MODES).optional(),
  /** `hive`: its files are `metric=<metric>/dt=<day>/...`; absent: `<metric>/<day>.<ext>` (every earlier release). */
  layout: z.enum(LAYOUTS).optional(),
});

// Earlier releases: version 1 kept a last complete day per key, version 2 that day's stores and the pending days after it.
const v1Schema = z.object({ version: z.literal(1).optional(), lastCompleteDay: z.record(z.string(), z.string()) });
const v2Schema = z.strictObject({
  version: z.literal(2),
  metrics: z.record(
    z.string(),
    z.strictObject({
      lastCompleteDay: z.string().optional(),
      stores: z.number().int().min(0).optional(),
      storeSet: z.string().optional(),
      pending: z
        .record(z.string(), z.strictObject({ reason: z.enum(['not-published', 'partial', 'not-over']), missingStores: z.number().int().min(0).optional(), stores: z.number().int().min(0).optional() }))
        .optional(),
    }),
  ),
  storeSets: z.record(z.string(), z.string()),
});

type StateEntry = z.infer<typeof entrySchema>;
type StateFile = z.infer<typeof v3Schema>;
export type LastRun = z.infer<typeof lastRunSchema>;

/** `traffic`, or `traffic[store=A,B]` when a run is limited to stores, so partial runs never mark a day done. */
export function stateKey(metric: string, storeCodes: readonly string[]): string {
  return storeCodes.length === 0 ? metric : `${metric}[store=${[...storeCodes].sort().join(',')}]`;
}

/** The metric of a state key (`traffic[store=A]` -> `traffic`). */
export function metricOfKey(key: string): string {
  const bracket = key.indexOf('[');
  return bracket < 0 ? key : key.slice(0, bracket);
}

export interface StateLoadOptions {
  /** The clock that tells which days are in the future. */
  readonly now: Date;
  /**
   * The day mode of the run that writes: a state (and its folder) keeps the mode of its first run, and a run in the
   * other mode is refused. Absent for commands that only read or settle days, which take the state's own mode.
   */
  readonly mode?: DayMode;
  /** Like `mode`, for the output's file layout. */
  readonly layout?: Layout;
  /** The metric names a key may start with. */
  readonly metricNames: readonly string[];
}

/**
 * Where the state's text lives. A folder keeps it in a file under a lock; an object store can keep it as an object
 * replaced by a conditional write. Either way `update` is one atomic read-merge-write against other writers.
 */
export interface StateStorage {
  /** The path or URL, for messages. */
  readonly location: string;
  /** The stored text; undefined when there is none yet. */
  read(): Promise<string | undefined>;
  /**
   * Replaces the text with what `change` makes of the current one (undefined: leave it as it is), with no other
   * writer in between; a storage that detects a conflict instead of locking calls `change` again on the newer text.
   */
  update(change: (current: string | undefined) => string | undefined): Promise<void>;
}

/** How long a lock may be held before another run takes it over: an update takes milliseconds. */
const STALE_LOCK_MS = 60_000;

/** The state in a local file, changed under `<file>.lock`. */
export class FileStateStorage implements StateStorage {
  constructor(readonly location: string) {}

  async read(): Promise<string | undefined> {
    try {
      return await readFile(this.location, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw new UsageError(`cannot read state file ${this.location}: ${(error as Error).message}`);
    }
  }

  async update(change: (current: string | undefined) => string | undefined): Promise<void> {
    const lockPath = `${this.location}.lock`;
    let release: () => Promise<void>;
    try {
      await makeFolder(dirname(this.location));
      release = await acquireLock(lockPath);
    } catch (error) {
      throw asOutputError(error, `cannot lock the state file with ${lockPath}`);
    }
    try {
      const next = change(await this.read());
      if (next !== undefined) await writeFileAtomic(this.location, [next]);
    } finally {
      await release().catch(() => {});
    }
  }
}

/** One key's coverage as read: every day is in at most one of complete, accepted, given up and pending. */
export interface KeyCoverage {
  readonly complete: readonly DayRange[];
  readonly accepted: readonly DayRange[];
  readonly givenUp: readonly DayRange[];
  readonly pending: readonly { readonly day: UtcDay; readonly status: PendingDay }[];
}

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

  private constructor(
    readonly storage: StateStorage,
    private file: StateFile,
    private readonly options: StateLoadOptions,
  ) {}

  get path(): string {
    return this.storage.location;
  }

  /** Reads and checks the state; none means an empty state. Anything unusable is a usage error naming the value. */
  static async load(storage: StateStorage | string, options: StateLoadOptions): Promise<ImportState> {
    const store = typeof storage === 'string' ? new FileStateStorage(storage) : storage;
    const file = parseState(await store.read(), store.location, options);
    if (file !== undefined && options.mode !== undefined) refuseOtherMode(file, options.mode, store.location);
    if (file !== undefined && options.layout !== undefined) refuseOtherLayout(file, options.layout, store.location);
    return new ImportState(store, file ?? emptyState(), options);
  }

  /** The state's day mode: UTC days unless a local-mode run created it. */
  get dayMode(): DayMode {
    return this.file.days ?? 'utc';
  }

  /** The state's file layout: flat unless a hive-layout run created it. */
  get layout(): Layout {
    return this.file.layout ?? 'flat';
  }

  /** Like `load`, but no state is an error too (for `status`, which only reads). */
  static async loadExisting(storage: StateStorage | string, options: StateLoadOptions): Promise<ImportState> {
    const store = typeof storage === 'string' ? new FileStateStorage(storage) : storage;
    const file = parseState(await store.read(), store.location, options);
    if (file === undefined) {
      throw new UsageError(`no state file at ${store.location}: nothing has been imported into it yet (or pass --state <file>)`);
    }
    return new ImportState(store, file, options);
  }

  keys(): string[] {
    return Object.keys(this.file.metrics).sort();
  }

  lastRun(): LastRun | undefined {
    return this.file.lastRun;
  }

  coverage(key: string): KeyCoverage {
    const entry = this.file.metrics[key] ?? {};
    const pending = entry.pending ?? {};
    return {
      complete: entry.complete ?? [],
      accepted: entry.accepted ?? [],
      givenUp: entry.givenUp ?? [],
      pending: Object.keys(pending)
        .sort()
        .map((day) => ({ day, status: pending[day]! })),
    };
  }

  /** The latest complete day. */
  lastCompleteDay(key: string): UtcDay | undefined {
    return this.file.metrics[key]?.complete?.at(-1)?.[1];
  }

  /** Complete or accepted: the day is not asked for again by `--catch-up`, nor demoted by a later import. */
  isFinal(key: string, day: UtcDay): boolean {
    const entry = this.file.metrics[key];
    return entry !== undefined && (rangesHold(entry.complete ?? [], day) || rangesHold(entry.accepted ?? [], day));
  }

  isGivenUp(key: string, day: UtcDay): boolean {
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
      codes = decodeStoreSet(this.file.storeSets[id], this.path, id);
      this.storeSetCache.set(id, codes);
    }
    return codes;
  }

  /** Pending days (not complete, not accepted) with their reason, oldest first. */
  pending(key: string): KeyCoverage['pending'] {
    return this.coverage(key).pending;
  }

  /**
   * Records `day` complete with the stores it had (no longer pending, given up or accepted). The stores become the
   * expectation for other days when `day` is the latest complete one.
   */
  async markComplete(key: string, day: UtcDay, storeCodes: readonly string[]): Promise<void> {
    await this.update((file) => {
      const entry = cleared(file.metrics[key] ?? {}, [day]);
      const latest = entry.complete?.at(-1)?.[1];
      entry.complete = withDays(entry.complete ?? [], [day]);
      if (latest === undefined || day >= latest) {
        const sorted = [...new Set(storeCodes)].sort();
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

  /** Notes why a day is not final; a final day stays final (a look-back that meets a hiccup changes nothing). */
  async markPending(key: string, day: UtcDay, status: PendingDay): Promise<boolean> {
    return this.update((file) => {
      const entry = file.metrics[key] ?? {};
      if (isFinalIn(entry, day)) return false;
      const next = cleared(entry, [day]);
      (next.pending ??= {})[day] = { ...status };
      file.metrics[key] = next;
      return true;
    });
  }

  /**
   * Before a run fetches anything: the days it was asked for that are not final are pending (`interrupted`) until
   * they are judged, so a run killed half-way leaves them to the next `--catch-up`. A day already pending keeps its
   * reason, a given-up day stays given up.
   */
  async markAsked(days: readonly { readonly key: string; readonly day: UtcDay }[]): Promise<void> {
    await this.update((file) => {
      let changed = false;
      for (const { key, day } of days) {
        const entry = (file.metrics[key] ??= {});
        if (isFinalIn(entry, day) || rangesHold(entry.givenUp ?? [], day) || entry.pending?.[day] !== undefined) continue;
        (entry.pending ??= {})[day] = { reason: 'interrupted' };
        changed = true;
      }
      return changed;
    });
  }

  /** Records a day that never came as given up: not asked for again, still a gap until it is accepted. */
  async markGivenUp(key: string, day: UtcDay): Promise<void> {
    await this.update((file) => {
      const entry = cleared(file.metrics[key] ?? {}, [day]);
      entry.givenUp = withDays(entry.givenUp ?? [], [day]);
      file.metrics[key] = entry;
      return true;
    });
  }

  /** Records the days as final whatever their data (complete days stay complete). */
  async accept(key: string, days: readonly UtcDay[]): Promise<void> {
    await this.update((file) => {
      const current = file.metrics[key] ?? {};
      const open = days.filter((day) => !rangesHold(current.complete ?? [], day));
      const entry = cleared(current, open);
      entry.accepted = withDays(entry.accepted ?? [], open);
      file.metrics[key] = entry;
      return true;
    });
  }

  /** Makes the days pending again (`reopened`), so the next `--catch-up` imports them. */
  async reopen(key: string, days: readonly UtcDay[]): Promise<void> {
    await this.update((file) => {
      const entry = cleared(file.metrics[key] ?? {}, days);
      const pending = (entry.pending ??= {});
      for (const day of days) pending[day] = { reason: 'reopened' };
      file.metrics[key] = entry;
      return true;
    });
  }

  async recordRun(run: LastRun): Promise<void> {
    await this.update((file) => {
      file.lastRun = run;
      return true;
    });
  }

  /** Read-merge-write through the storage; `change` edits the freshly read state and says whether it changed it. */
  private async update<T extends boolean | void>(change: (file: StateFile) => T): Promise<T> {
    let result!: T;
    await this.storage.update((text) => {
      const read = parseState(text, this.path, this.options);
      const { mode } = this.options;
      // A run of the other mode may have created the state since it was loaded: its days are not this run's.
      if (read !== undefined && mode !== undefined) refuseOtherMode(read, mode, this.path);
      const { layout } = this.options;
      if (read !== undefined && layout !== undefined) refuseOtherLayout(read, layout, this.path);
      const file = read ?? emptyState();
      // The mode is written with the state's first change: absent means UTC days, as every earlier release wrote.
      const modeAdded = mode === 'local' && file.days !== 'local';
      if (modeAdded) file.days = 'local';
      // The layout likewise: absent means flat.
      const layoutAdded = layout === 'hive' && file.layout !== 'hive';
      if (layoutAdded) file.layout = 'hive';
      result = change(file);
      this.file = file;
      if (result === false && !modeAdded && !layoutAdded) return undefined;
      pruneStoreSets(file);
      return formatState(file);
    });
    return result;
  }
}

function isFinalIn(entry: StateEntry, day: UtcDay): boolean {
  return rangesHold(entry.complete ?? [], day) || rangesHold(entry.accepted ?? [], day);
}

/**
 * Takes the days out of every list of the entry (which belongs to a freshly read state, so it is changed in place),
 * so that each day has one status; returns it.
 */
function cleared(entry: StateEntry, days: readonly UtcDay[]): StateEntry {
  // Lists that hold none of the days are kept as they are: a long backfill changes one day at a time.
  for (const list of ['complete', 'accepted', 'givenUp'] as const) {
    const ranges = entry[list];
    if (ranges === undefined || !days.some((day) => rangesHold(ranges, day))) continue;
    const rest = withoutDays(ranges, days);
    if (rest.length > 0) entry[list] = rest;
    else delete entry[list];
  }
  if (entry.pending !== undefined) {
    for (const day of days) delete entry.pending[day];
    if (Object.keys(entry.pending).length === 0) delete entry.pending;
  }
  return entry;
}

/**
 * The file's text: keys in a fixed order, one range or pending day per line, so a diff of two states reads well and a
 * year of coverage stays short.
 */
function formatState(file: StateFile): string {
  const list = (items: readonly string[], indent: string): string =>
    items.length === 0 ? '[]' : `[\n${items.map((item) => `${indent}  ${item}`).join(',\n')}\n${indent}]`;
  const object = (fields: readonly (readonly [string, string | undefined])[], indent: string): string => {
    const present = fields.filter((field): field is readonly [string, string] => field[1] !== undefined);
    return present.length === 0 ? '{}' : `{\n${present.map(([key, value]) => `${indent}  ${JSON.stringify(key)}: ${value}`).join(',\n')}\n${indent}}`;
  };
  const ranges = (value: readonly DayRange[] | undefined): string | undefined =>
    value === undefined ? undefined : list(value.map((range) => JSON.stringify(range).replace(',', ', ')), '      ');
  const metrics = Object.keys(file.metrics)
    .sort()
    .map((key) => {
      const entry = file.metrics[key]!;
      const pending =
        entry.pending === undefined
          ? undefined
          : object(
              Object.keys(entry.pending)
                .sort()
                .map((day) => [day, JSON.stringify(entry.pending![day])] as const),
              '      ',
            );
      const fields = [
        ['complete', ranges(entry.complete)],
        ['accepted', ranges(entry.accepted)],
        ['givenUp', ranges(entry.givenUp)],
        ['pending', pending],
        ['stores', entry.stores === undefined ? undefined : String(entry.stores)],
        ['storeSet', entry.storeSet === undefined ? undefined : JSON.stringify(entry.storeSet)],
      ] as const;
      return [key, object(fields, '    ')] as const;
    });
  const storeSets = Object.entries(file.storeSets).map(([id, codes]) => [id, JSON.stringify(codes)] as const);
  return `${object(
    [
      ['version', String(STATE_VERSION)],
      ['metrics', object(metrics, '  ')],
      ['storeSets', object(storeSets, '  ')],
      ['lastRun', file.lastRun === undefined ? undefined : JSON.stringify(file.lastRun)],
      ['days', file.days === undefined ? undefined : JSON.stringify(file.days)],
      ['layout', file.layout === undefined ? undefined : JSON.stringify(file.layout)],
    ],
    '',
  )}\n`;
}

function refuseOtherMode(file: StateFile, mode: DayMode, path: string): void {
  const kept = file.days ?? 'utc';
  if (kept === mode) return;
  throw new UsageError(
    `--days ${mode} does not match the state ${path}, which holds ${kept === 'utc' ? 'UTC days (--days utc)' : 'store-local days (--days local)'}: ` +
      `one output folder and state keep one day mode; use --days ${kept}, or another -o folder and --state for --days ${mode}`,
  );
}

function refuseOtherLayout(file: StateFile, layout: Layout, path: string): void {
  const kept = file.layout ?? 'flat';
  if (kept === layout) return;
  throw new UsageError(
    `--layout ${layout} does not match the state ${path}, whose files are laid out ${kept === 'flat' ? 'flat (--layout flat)' : 'in hive partitions (--layout hive)'}: ` +
      `one output folder and state keep one layout; use --layout ${kept}, or another -o folder and --state for --layout ${layout}`,
  );
}

function emptyState(): StateFile {
  return { version: STATE_VERSION, metrics: {}, storeSets: {} };
}

function parseState(text: string | undefined, path: string, options: StateLoadOptions): StateFile | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`state file ${path} is not valid JSON; fix or delete it`);
  }
  const version = (parsed as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && Number.isInteger(version) && version > STATE_VERSION) {
    throw new UsageError(
      `state file ${path} has version ${version}, newer than this area-metrics reads (${STATE_VERSION}); upgrade area-metrics`,
    );
  }
  const file = upgrade(parsed, path);
  checkState(file, path, options);
  return file;
}

function upgrade(parsed: unknown, path: string): StateFile {
  const v3 = v3Schema.safeParse(parsed);
  if (v3.success) return v3.data;
  const v1 = v1Schema.safeParse(parsed);
  if (v1.success) {
    return upgradeV2({ version: 2, storeSets: {}, metrics: Object.fromEntries(Object.entries(v1.data.lastCompleteDay).map(([key, day]) => [key, { lastCompleteDay: day }])) }, path);
  }
  const v2 = v2Schema.safeParse(parsed);
  if (v2.success) return upgradeV2(v2.data, path);
  const version = (parsed as { version?: unknown } | null)?.version;
  const issue = version === 3 ? v3Schema.safeParse(parsed).error?.issues[0] : undefined;
  const where = issue === undefined ? '' : `: ${issue.path.join('.')}: ${issue.message}`;
  throw new UsageError(`state file ${path} is not an area-metrics state file${where}; fix or delete it`);
}

/**
 * Earlier releases knew only where the contiguous run of complete days ended, not where it began: coverage starts at
 * that day. Their `partial` reason is now `partly-published`.
 */
function upgradeV2(file: z.infer<typeof v2Schema>, path: string): StateFile {
  const metrics: Record<string, StateEntry> = {};
  for (const [key, old] of Object.entries(file.metrics)) {
    const entry: StateEntry = {};
    if (old.lastCompleteDay !== undefined) {
      if (!isValidDay(old.lastCompleteDay)) {
        throw new UsageError(`state file ${path}: ${key} lastCompleteDay ${JSON.stringify(old.lastCompleteDay)} is not a valid day (YYYY-MM-DD); fix or delete it`);
      }
      entry.complete = [[old.lastCompleteDay, old.lastCompleteDay]];
    }
    if (old.stores !== undefined) entry.stores = old.stores;
    if (old.storeSet !== undefined) entry.storeSet = old.storeSet;
    if (old.pending !== undefined) {
      entry.pending = Object.fromEntries(
        Object.entries(old.pending).map(([day, status]) => [day, { ...status, reason: status.reason === 'partial' ? 'partly-published' : status.reason }]),
      );
    }
    metrics[key] = entry;
  }
  return { version: STATE_VERSION, metrics, storeSets: file.storeSets };
}

/** Days that do not exist or lie in the future, unknown keys and dangling store sets would mislead `--catch-up`. */
function checkState(file: StateFile, path: string, options: StateLoadOptions): void {
  const current = today(options.now);
  // Today's window is not over, so no day after yesterday is final.
  const lastFinal = addDays(current, -1);
  const fail = (what: string): never => {
    throw new UsageError(`state file ${path}: ${what}; fix or delete it`);
  };
  const checkDay = (key: string, field: string, day: string, latest: UtcDay): void => {
    if (!knownValidDay(day)) fail(`${key} ${field} ${JSON.stringify(day)} is not a valid day (YYYY-MM-DD)`);
    if (day > latest) fail(`${key} ${field} ${day} is in the future (today is ${current} UTC)`);
  };
  const checkRanges = (key: string, field: string, ranges: readonly DayRange[] | undefined): void => {
    for (const [first, last] of ranges ?? []) {
      checkDay(key, field, first, lastFinal);
      checkDay(key, field, last, lastFinal);
      if (first > last) fail(`${key} ${field} range ${first}..${last} ends before it starts`);
    }
  };
  for (const [key, entry] of Object.entries(file.metrics)) {
    if (!isKnownKey(key, options.metricNames)) {
      fail(`unknown metric key ${JSON.stringify(key)} (expected ${options.metricNames.join(', ')}, or <metric>[store=...])`);
    }
    checkRanges(key, 'complete', entry.complete);
    checkRanges(key, 'accepted', entry.accepted);
    checkRanges(key, 'givenUp', entry.givenUp);
    // Written by hand out of order: read as the days they name.
    for (const list of ['complete', 'accepted', 'givenUp'] as const) {
      if (entry[list] !== undefined) entry[list] = rangesOfDays(daysOfRanges(entry[list]));
    }
    for (const day of Object.keys(entry.pending ?? {})) checkDay(key, 'pending day', day, current);
    if (entry.storeSet !== undefined && file.storeSets[entry.storeSet] === undefined) {
      fail(`${key} names store set ${JSON.stringify(entry.storeSet)}, which is not in storeSets`);
    }
  }
  if (file.lastRun !== undefined && Number.isNaN(Date.parse(file.lastRun.time))) {
    fail(`lastRun time ${JSON.stringify(file.lastRun.time)} is not a date-time`);
  }
}

/** The same days are checked on every read of a state: each distinct one is checked once. */
const knownValidDay = boundedMemo(isValidDay, 100_000);

function isKnownKey(key: string, metricNames: readonly string[]): boolean {
  const match = /^([a-z-]+)(?:\[store=.+\])?$/s.exec(key);
  return match !== null && metricNames.includes(match[1]!);
}

function storeSetId(sortedCodes: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(sortedCodes)).digest('hex').slice(0, 16);
}

function encodeStoreSet(sortedCodes: readonly string[]): string {
  return deflateRawSync(JSON.stringify(sortedCodes)).toString('base64');
}

function decodeStoreSet(encoded: string | undefined, path: string, id: string): readonly string[] {
  try {
    const codes: unknown = JSON.parse(inflateRawSync(Buffer.from(encoded ?? '', 'base64')).toString('utf8'));
    if (Array.isArray(codes) && codes.every((code) => typeof code === 'string')) return codes;
  } catch {
    // Reported below.
  }
  throw new UsageError(`state file ${path}: store set ${JSON.stringify(id)} is damaged; fix or delete it`);
}

/** Sets no key refers to any more are dropped, so the file does not grow with every change of a chain's stores. */
function pruneStoreSets(file: StateFile): void {
  const used = new Set(Object.values(file.metrics).map((entry) => entry.storeSet));
  for (const id of Object.keys(file.storeSets)) if (!used.has(id)) delete file.storeSets[id];
}

/**
 * Takes the lock exclusively, waiting while another live run holds it; returns its release. The lock is a symbolic
 * link whose target is the holder's pid: creating it is atomic and fails if it exists, and its target lives in the
 * inode, so taking the lock needs no free block on a nearly full disk. One left by a killed run is taken over at
 * once, and one older than a minute in any case.
 */
async function acquireLock(lockPath: string): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      await symlink(String(process.pid), lockPath);
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw error;
    }
    if (await isStaleLock(lockPath)) {
      await rm(lockPath, { force: true });
      continue;
    }
    // Short, jittered waits: the holder needs milliseconds.
    await sleep(5 + Math.floor(Math.random() * Math.min(50, 5 * (attempt + 1))));
  }
}

async function isStaleLock(lockPath: string): Promise<boolean> {
  try {
    const info = await lstat(lockPath);
    const pid = info.isSymbolicLink() ? Number(await readlink(lockPath)) : Number.NaN;
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) return true;
    return Date.now() - info.mtimeMs > STALE_LOCK_MS;
  } catch (error) {
    // Released between our attempt and this look: simply try again.
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}
