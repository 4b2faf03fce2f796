import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { addDays, isValidDay, today, type UtcDay } from '../window/days.js';
import { writeFileAtomic } from './atomic-file.js';
import { asOutputError } from './write-failure.js';
import { isProcessAlive } from './stale-temp.js';

export const STATE_FILE_NAME = '.area-metrics-state.json';
/** The format this release writes; version 1 files (the previous release) are read and upgraded on the next write. */
export const STATE_VERSION = 2;

/** Why a day after the last complete one is not complete yet. */
export type PendingReason = 'not-published' | 'partial' | 'not-over';

export interface PendingDay {
  readonly reason: PendingReason;
  /** With `partial`: stores of the last complete day that this window lacks. */
  readonly missingStores?: number;
  /** Stores the window had. */
  readonly stores?: number;
}

const pendingSchema = z.strictObject({
  reason: z.enum(['not-published', 'partial', 'not-over']),
  missingStores: z.number().int().min(0).optional(),
  stores: z.number().int().min(0).optional(),
});

const entrySchema = z.strictObject({
  /** The end of the contiguous run of complete days. */
  lastCompleteDay: z.string().optional(),
  /** How many stores reported on that day. */
  stores: z.number().int().min(0).optional(),
  /** Which ones: the id of a set in `storeSets`. */
  storeSet: z.string().optional(),
  /**
   * Days after the last complete one that a run imported without error but could not record complete, and why. A
   * failed day is not kept here: its run exited non-zero, and the next `--catch-up` asks for it again anyway.
   */
  pending: z.record(z.string(), pendingSchema).optional(),
});

// The previous release wrote `version: 1`; a hand-made file may leave it out.
const v1Schema = z.object({ version: z.literal(1).optional(), lastCompleteDay: z.record(z.string(), z.string()) });
const v2Schema = z.strictObject({
  version: z.literal(2),
  metrics: z.record(z.string(), entrySchema),
  /**
   * Store code sets by id, each the sorted codes as a JSON array, deflated and Base64-encoded: a chain of 20,000
   * stores costs tens of kilobytes instead of hundreds, and metrics with the same stores share one set.
   */
  storeSets: z.record(z.string(), z.string()),
});

type StateEntry = z.infer<typeof entrySchema>;
type StateFile = z.infer<typeof v2Schema>;

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
  /** The metric names a key may start with. */
  readonly metricNames: readonly string[];
}

/** How long a lock may be held before another run takes it over: an update takes milliseconds. */
const STALE_LOCK_MS = 60_000;

/**
 * The record `--catch-up` and `status` work from: per metric (and store selection), the last complete day, its
 * stores, and the days seen after it that are not complete yet.
 *
 * Several runs may write one state at the same time (two cron lines, a backfill during the nightly run). Every change
 * is a read-merge-write under a lock next to the state (`<state>.lock`, created exclusively, held only for the
 * update): the file is read again, only the one key's change is applied, and the file is replaced atomically. So no
 * run loses another's keys, and a key never moves backwards. A lock left by a process that is gone (or older than a
 * minute) is taken over.
 */
export class ImportState {
  private readonly storeSetCache = new Map<string, readonly string[]>();

  private constructor(
    readonly path: string,
    private file: StateFile,
    private readonly options: StateLoadOptions,
  ) {}

  /** Reads and checks the state; no file means an empty state. Anything unusable is a usage error naming the file. */
  static async load(path: string, options: StateLoadOptions): Promise<ImportState> {
    return new ImportState(path, (await readStateFile(path, options)) ?? emptyState(), options);
  }

  /** Like `load`, but a missing file is an error too (for `status`, which only reads). */
  static async loadExisting(path: string, options: StateLoadOptions): Promise<ImportState> {
    const file = await readStateFile(path, options);
    if (file === undefined) throw new UsageError(`no state file at ${path}: nothing has been imported into it yet (or pass --state <file>)`);
    return new ImportState(path, file, options);
  }

  keys(): string[] {
    return Object.keys(this.file.metrics).sort();
  }

  lastCompleteDay(key: string): UtcDay | undefined {
    return this.file.metrics[key]?.lastCompleteDay;
  }

  /** How many stores reported on the last complete day. */
  storeCount(key: string): number | undefined {
    return this.file.metrics[key]?.stores;
  }

  /** The store codes of the last complete day, sorted; undefined when no day is complete (or none were kept). */
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

  /** Days after the last complete one that are not complete, oldest first. */
  pending(key: string): { readonly day: UtcDay; readonly status: PendingDay }[] {
    const pending = this.file.metrics[key]?.pending ?? {};
    return Object.keys(pending)
      .sort()
      .map((day) => ({ day, status: pending[day]! }));
  }

  /**
   * Records `day` as complete for `key`, with the stores it had, if it extends the contiguous run of complete days
   * (or starts it); returns whether it did. A day at or before the last complete one changes nothing: the state never
   * moves backwards.
   */
  async markComplete(key: string, day: UtcDay, storeCodes: readonly string[]): Promise<boolean> {
    return this.update((file) => {
      const entry = file.metrics[key] ?? {};
      const last = entry.lastCompleteDay;
      if (last !== undefined && addDays(last, 1) !== day) return false;
      const sorted = [...new Set(storeCodes)].sort();
      const id = storeSetId(sorted);
      if (file.storeSets[id] === undefined) file.storeSets[id] = encodeStoreSet(sorted);
      this.storeSetCache.set(id, sorted);
      const pending = Object.fromEntries(Object.entries(entry.pending ?? {}).filter(([pendingDay]) => pendingDay > day));
      file.metrics[key] = {
        lastCompleteDay: day,
        stores: sorted.length,
        storeSet: id,
        ...(Object.keys(pending).length > 0 ? { pending } : {}),
      };
      return true;
    });
  }

  /** Notes why a day after the last complete one is not complete (nothing for a day at or before it). */
  async markPending(key: string, day: UtcDay, status: PendingDay): Promise<boolean> {
    return this.update((file) => {
      const entry: StateEntry = file.metrics[key] ?? {};
      if (entry.lastCompleteDay !== undefined && day <= entry.lastCompleteDay) return false;
      file.metrics[key] = { ...entry, pending: { ...entry.pending, [day]: { ...status } } };
      return true;
    });
  }

  /** Read-merge-write under the lock; `change` edits the freshly read file and says whether it changed it. */
  private async update(change: (file: StateFile) => boolean): Promise<boolean> {
    const lockPath = `${this.path}.lock`;
    let release: () => Promise<void>;
    try {
      await mkdir(dirname(this.path), { recursive: true });
      release = await acquireLock(lockPath);
    } catch (error) {
      throw asOutputError(error, `cannot lock the state file with ${lockPath}`);
    }
    try {
      const file = (await readStateFile(this.path, this.options)) ?? emptyState();
      const changed = change(file);
      if (changed) {
        pruneStoreSets(file);
        await writeFileAtomic(this.path, [`${JSON.stringify(file, null, 2)}\n`]);
      }
      this.file = file;
      return changed;
    } finally {
      await release().catch(() => {});
    }
  }
}

function emptyState(): StateFile {
  return { version: STATE_VERSION, metrics: {}, storeSets: {} };
}

async function readStateFile(path: string, options: StateLoadOptions): Promise<StateFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read state file ${path}: ${(error as Error).message}`);
  }
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
  const v1 = v1Schema.safeParse(parsed);
  const file = v1.success ? upgradeV1(v1.data.lastCompleteDay) : v2Schema.safeParse(parsed).data;
  if (file === undefined) throw new UsageError(`state file ${path} is not an area-metrics state file; fix or delete it`);
  checkState(file, path, options);
  return file;
}

/** A version 1 file only had the last complete day per key; its stores are learnt again from the next complete day. */
function upgradeV1(lastCompleteDay: Record<string, string>): StateFile {
  const metrics: Record<string, StateEntry> = {};
  for (const [key, day] of Object.entries(lastCompleteDay)) metrics[key] = { lastCompleteDay: day };
  return { version: STATE_VERSION, metrics, storeSets: {} };
}

/** Days that do not exist or lie in the future, unknown keys and dangling store sets would mislead `--catch-up`. */
function checkState(file: StateFile, path: string, options: StateLoadOptions): void {
  const current = today(options.now);
  const fail = (what: string): never => {
    throw new UsageError(`state file ${path}: ${what}; fix or delete it`);
  };
  const checkDay = (key: string, field: string, day: string, latest: UtcDay): void => {
    if (!isValidDay(day)) fail(`${key} ${field} ${JSON.stringify(day)} is not a valid day (YYYY-MM-DD)`);
    if (day > latest) fail(`${key} ${field} ${day} is in the future (today is ${current} UTC)`);
  };
  for (const [key, entry] of Object.entries(file.metrics)) {
    if (!isKnownKey(key, options.metricNames)) {
      fail(`unknown metric key ${JSON.stringify(key)} (expected ${options.metricNames.join(', ')}, or <metric>[store=...])`);
    }
    // Today's window is not over, so the last complete day is yesterday at the latest.
    if (entry.lastCompleteDay !== undefined) checkDay(key, 'lastCompleteDay', entry.lastCompleteDay, addDays(current, -1));
    for (const day of Object.keys(entry.pending ?? {})) checkDay(key, 'pending day', day, current);
    if (entry.storeSet !== undefined && file.storeSets[entry.storeSet] === undefined) {
      fail(`${key} names store set ${JSON.stringify(entry.storeSet)}, which is not in storeSets`);
    }
  }
}

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
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
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
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
