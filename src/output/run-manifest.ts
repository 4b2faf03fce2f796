import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode, OutputError } from '../errors.js';
import { createFileExclusive } from './atomic-file.js';
import type { Layout, UnitPlace } from './layout.js';
import { objectKey, type ObjectLocation } from './object-location.js';
import type { ObjectStore } from './object-store.js';
import type { StoredFile } from './sinks.js';
import { asOutputError } from './write-failure.js';

/** Where the manifests live under the output; the leading `_` makes every lake reader skip it. */
export const RUNS_FOLDER = '_runs';

/** How many manifests an output keeps: the newest. */
export const MANIFESTS_KEPT = 200;

/** The manifest format; a loader checks it before reading the rest. */
export const MANIFEST_VERSION = 1;

/**
 * A run id: a UUID version 7, whose first 48 bits are the start in milliseconds, so ids sort by start time as text;
 * the same id is the run's OpenLineage run id. It is in the manifest, not its name: a run's manifest appears when the
 * run ends, so start order is not the order loaders see manifests in. Ids of one start (commands on a test clock that
 * stands still) sort in the order they were made: the next 42 bits are the system time of `madeAt` (where a UUIDv7
 * may carry more clock), the last 32 random.
 */
export function newRunId(start: number = Date.now(), madeAt: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(start, 0, 6);
  // 12 bits after the version, 30 after the variant: milliseconds up to 2^42 (the year 2109).
  const high = Math.floor(madeAt / MADE_AT_LOW) & 0xfff;
  const low = madeAt % MADE_AT_LOW;
  bytes[6] = 0x70 | (high >> 8);
  bytes[7] = high & 0xff;
  bytes[8] = 0x80 | (low >>> 24);
  bytes.writeUIntBE(low & 0xffffff, 9, 3);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The span of the 30 low bits of a run id's `madeAt`. */
const MADE_AT_LOW = 2 ** 30;

/** A manifest's name in releases before numbered names: its run id. */
const RUN_ID_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json$/;

/** One unit of the run as the manifest tells it. */
export interface ManifestUnit {
  readonly metric: string;
  readonly day: string;
  readonly store: string | null;
  /** The data file, relative to the output; null when the unit wrote none (no results, failed, not attempted). */
  readonly path: string | null;
  readonly rows: number | null;
  readonly bytes: number | null;
  readonly sha256: string | null;
  /** True when the file's bytes are new; false when it was already there as it is (left untouched), or none. */
  readonly changed: boolean;
  /**
   * What the file is: `final` (its day is recorded complete, or accepted), `provisional` (its day is pending: the
   * bytes may still change, `reason` says why), or `failed` (no file from this run: failed or not attempted).
   */
  readonly status: 'final' | 'provisional' | 'failed';
  readonly reason?: string;
  /** With reason `suspect`: the day was final, and the vendor's correction of it is held. */
  readonly correction?: true;
  /** The run made its day final, with new bytes or not: a loader that skipped it as provisional loads it now. */
  readonly finalized?: true;
  /** Records set aside by `--on-invalid skip`, and where. */
  readonly rejected?: { readonly records: number; readonly path: string };
  /** Why the unit failed, or why it was not attempted. */
  readonly error?: { readonly exitCode: number | null; readonly message: string };
}

/** A run's manifest: `<output>/_runs/seq-<number>.json`, or a row of a database's runs table. */
export interface RunManifest {
  readonly manifestVersion: typeof MANIFEST_VERSION;
  readonly runId: string;
  readonly tool: 'area-metrics';
  readonly version: string;
  /** The command and its window as given (`traffic --catch-up --max-days 31`). */
  readonly command: string;
  readonly start: string;
  readonly end: string;
  readonly exitCode: number;
  /** Requests sent to the vendor's API and its 429 answers; null when the run did not count them. */
  readonly requests: number | null;
  readonly throttled: number | null;
  /** The files' layout and format; absent for a database, which writes rows, not files. */
  readonly layout?: Layout;
  readonly format?: string;
  readonly days: string;
  /** In plan order: metric, day, store. */
  readonly units: readonly ManifestUnit[];
}

/** What the state says of a unit's day when the run ends. */
export type DayStanding =
  | { readonly status: 'final'; readonly finalized?: true }
  | { readonly status: 'provisional'; readonly reason: string; readonly correction?: true };

/** What a committed unit gave, as far as a manifest cares. */
export type UnitRecord =
  | {
      readonly ok: true;
      readonly rows: number;
      readonly file?: StoredFile;
      readonly changed: boolean;
      readonly rejected?: { readonly records: number; readonly path: string };
    }
  | { readonly ok: false; readonly exitCode: number; readonly message: string };

export interface ManifestRun {
  readonly runId: string;
  readonly version: string;
  readonly command: string;
  readonly start: Date;
  /** The files' layout and format; absent for a database, which writes rows, not files. */
  readonly layout?: Layout;
  readonly format?: string;
  readonly days: string;
}

export interface ManifestEnd {
  readonly end: Date;
  readonly exitCode: number;
  readonly requests?: number | undefined;
  readonly throttled?: number | undefined;
  /** Said of each planned unit that has no record: why the run did not get to it. */
  readonly notAttempted: string;
  /** Each written unit's day as the state has it now; absent: provisional, nothing recorded it. */
  readonly standing?: (unit: UnitPlace) => DayStanding;
}

const placeKey = (unit: UnitPlace): string => JSON.stringify([unit.metric.name, unit.day, unit.storeCode ?? null]);

/** Collects a run's units as they are committed, in any order, and makes the manifest in plan order. */
export class RunManifestBuilder {
  private readonly records = new Map<string, UnitRecord>();

  constructor(
    private readonly run: ManifestRun,
    private readonly planned: readonly UnitPlace[],
  ) {}

  record(unit: UnitPlace, record: UnitRecord): void {
    this.records.set(placeKey(unit), record);
  }

  build(end: ManifestEnd): RunManifest {
    const { runId, version, command, start, layout, format, days } = this.run;
    return {
      manifestVersion: MANIFEST_VERSION,
      runId,
      tool: 'area-metrics',
      version,
      command,
      start: start.toISOString(),
      end: end.end.toISOString(),
      exitCode: end.exitCode,
      requests: end.requests ?? null,
      throttled: end.throttled ?? null,
      ...(layout === undefined ? {} : { layout }),
      ...(format === undefined ? {} : { format }),
      days,
      units: this.planned.map((unit) =>
        manifestUnit(unit, this.records.get(placeKey(unit)), end.notAttempted, end.standing?.(unit) ?? UNKNOWN),
      ),
    };
  }
}

const UNKNOWN: DayStanding = { status: 'provisional', reason: 'not-judged' };

function manifestUnit(unit: UnitPlace, record: UnitRecord | undefined, notAttempted: string, standing: DayStanding): ManifestUnit {
  const place = { metric: unit.metric.name, day: unit.day, store: unit.storeCode ?? null };
  if (record === undefined || !record.ok) {
    const error = record === undefined ? { exitCode: null, message: notAttempted } : { exitCode: record.exitCode, message: record.message };
    return { ...place, path: null, rows: null, bytes: null, sha256: null, changed: false, status: 'failed', error };
  }
  const { file } = record;
  return {
    ...place,
    ...(file === undefined
      ? { path: null, rows: record.rows, bytes: null, sha256: null, changed: false }
      : { path: file.path, rows: record.rows, bytes: file.bytes, sha256: file.sha256, changed: record.changed }),
    ...standing,
    ...(record.rejected === undefined ? {} : { rejected: record.rejected }),
  };
}

/** The manifest's text: the run's fields one per line, then one line per unit, so a long run stays readable. */
export function formatManifest(manifest: RunManifest): string {
  const { units, ...run } = manifest;
  const fields = Object.entries(run).map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  const lines = units.map((unit) => `    ${JSON.stringify(unit)}`);
  return `{\n${fields.join(',\n')},\n  "units": [${lines.length === 0 ? ']' : `\n${lines.join(',\n')}\n  ]`}\n}\n`;
}

/** Where an output keeps its manifests: numbered files or objects under `_runs/`, or a database's rows. */
export interface ManifestShelf {
  /**
   * Publishes the manifest after every manifest published before it, whatever runs overlap, so a loader that reads
   * what follows the last one it read misses none. Returns where it is, for messages. A failure is thrown (exit 7).
   */
  publish(manifest: RunManifest, text: string): Promise<string>;
  /** Removes the oldest manifests beyond the newest `keep`; returns how many it removed. */
  prune(keep: number): Promise<number>;
}

/** A folder-like place of named manifests: a folder, or a bucket prefix. */
export interface ManifestFolder {
  /** The manifest's path or URL, for messages. */
  locationOf(name: string): string;
  /** Creates `name` holding `text`, whole at the instant it appears; false, nothing written, when the name is taken. */
  create(name: string, text: string): Promise<boolean>;
  /** The names there. */
  names(): Promise<string[]>;
  remove(name: string): Promise<void>;
}

/**
 * A manifest's name: `seq-` and its number, 12 digits, in the order manifests were published. The letters sort after
 * every hex digit, so every such name sorts after the run-id names (`<UUIDv7>.json`) of earlier releases: a loader
 * whose last name read is one of those reads every numbered one.
 */
const NUMBERED_NAME = /^seq-(\d{12})\.json$/;
const NUMBER_DIGITS = 12;
const LAST_NUMBER = 10 ** NUMBER_DIGITS - 1;

/** The name of manifest number `number`. */
export function manifestName(number: number): string {
  return `seq-${String(number).padStart(NUMBER_DIGITS, '0')}.json`;
}

/** The number a manifest name carries; undefined for any other name. */
export function manifestNumber(name: string): number | undefined {
  const match = NUMBERED_NAME.exec(name);
  return match === null ? undefined : Number(match[1]);
}

/** A name this tool gave a manifest (numbered, or a run id of an earlier release): the only names pruning removes. */
export function isManifestName(name: string): boolean {
  return NUMBERED_NAME.test(name) || RUN_ID_NAME.test(name);
}

/** How many numbers a manifest tries when others keep taking the next one first, before the run gives up. */
const PUBLISH_ATTEMPTS = 1000;

/**
 * Manifests numbered in the order they appeared, as a commit log orders concurrent writers: list, take the highest
 * number + 1, create it only if absent (a hard link in a folder, `If-None-Match: *` in a bucket); if another writer
 * got it first, take the next. A number is only ever created after the one below it was seen to exist, so whenever
 * a name is visible, every lower name became visible before it: a loader never sees a number before a lower one.
 */
export class NumberedManifests implements ManifestShelf {
  constructor(private readonly folder: ManifestFolder) {}

  async publish(_manifest: RunManifest, text: string): Promise<string> {
    const highest = Math.max(0, ...(await this.folder.names()).map((name) => manifestNumber(name) ?? 0));
    const last = Math.min(highest + PUBLISH_ATTEMPTS, LAST_NUMBER);
    for (let number = highest + 1; number <= last; number++) {
      const name = manifestName(number);
      if (await this.folder.create(name, text)) return this.folder.locationOf(name);
    }
    const why =
      last === LAST_NUMBER ? `no number is left after ${manifestName(highest)}` : 'other runs kept taking every next number; run again';
    throw new OutputError(`cannot publish the run manifest in ${this.folder.locationOf('')}: ${why}`);
  }

  async prune(keep: number): Promise<number> {
    // Fixed-width numbers after the run ids of earlier releases: sorted as text, the oldest come first.
    const old = (await this.folder.names()).filter(isManifestName).sort().slice(0, -keep);
    for (const name of old) await this.folder.remove(name);
    return old.length;
  }
}

export class FolderManifests implements ManifestFolder {
  private readonly folder: string;

  constructor(outputDir: string) {
    this.folder = join(outputDir, RUNS_FOLDER);
  }

  locationOf(name: string): string {
    return join(this.folder, name);
  }

  create(name: string, text: string): Promise<boolean> {
    return createFileExclusive(this.locationOf(name), [text]);
  }

  async names(): Promise<string[]> {
    try {
      return await readdir(this.folder);
    } catch (error) {
      // No manifest yet: the first is created with the folder.
      if (errnoCode(error) === 'ENOENT') return [];
      throw asOutputError(error, `cannot list ${this.folder}`);
    }
  }

  async remove(name: string): Promise<void> {
    try {
      await rm(this.locationOf(name), { force: true });
    } catch (error) {
      throw asOutputError(error, `cannot remove ${this.locationOf(name)}`);
    }
  }
}

export class BucketManifests implements ManifestFolder {
  constructor(
    private readonly store: ObjectStore,
    private readonly location: ObjectLocation,
  ) {}

  private keyOf(name: string): string {
    return objectKey(this.location, `${RUNS_FOLDER}/${name}`);
  }

  locationOf(name: string): string {
    return this.store.url(this.keyOf(name));
  }

  create(name: string, text: string): Promise<boolean> {
    return this.store.createIfAbsent(this.keyOf(name), Buffer.from(text, 'utf8'));
  }

  async names(): Promise<string[]> {
    const folder = this.keyOf('');
    return (await this.store.listKeys(folder)).map((key) => key.slice(folder.length)).filter((name) => !name.includes('/'));
  }

  async remove(name: string): Promise<void> {
    await this.store.remove(this.keyOf(name));
  }
}

/** What saving a manifest did. */
export interface SavedManifest {
  readonly location: string;
  /** Manifests older than the newest `MANIFESTS_KEPT` removed. */
  readonly pruned: number;
  /** Why older manifests could not be listed or removed (the new one is written): worth a warning, not a failure. */
  readonly pruneError?: unknown;
}

/**
 * Publishes the manifest on the shelf, then removes the oldest beyond `keep` (only names this tool gives: anything
 * else in `_runs/` is left alone). A failed publication is thrown (the output's error, exit 7).
 */
export async function saveManifest(shelf: ManifestShelf, manifest: RunManifest, keep = MANIFESTS_KEPT): Promise<SavedManifest> {
  const location = await shelf.publish(manifest, formatManifest(manifest));
  try {
    return { location, pruned: await shelf.prune(keep) };
  } catch (error) {
    return { location, pruned: 0, pruneError: error };
  }
}
