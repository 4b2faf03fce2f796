import { UsageError } from '../../errors.js';
import { boundedMemo } from '../../memo.js';
import { daysOfRanges, rangesOfDays, type DayRange } from '../../window/day-ranges.js';
import { addDays, isValidDay, today, type CalendarDay } from '../../window/days.js';
import { isKnownKey } from '../keys.js';
import { STATE_BOUNDS } from './state-bounds.js';
import type { KeptDefaults, KeptSettings } from './kept-settings.js';
import { upgradeV1, v1Schema } from './versions/v1.js';
import { upgradeV2, v2Schema } from './versions/v2.js';
import { upgradeV3, v3Schema } from './versions/v3.js';
import { stateSchema as v4Schema } from './versions/v4.js';
import { upgradeV4 } from './versions/v5.js';
import { lastRunSchema, STATE_VERSION, stateSchema, type StateFile } from './versions/current.js';

export interface StateLoadOptions extends KeptSettings, KeptDefaults {
  /** The clock that tells which days are in the future. */
  readonly now: Date;
  /** The metric names a key may start with. */
  readonly metricNames: readonly string[];
}

export function emptyState(): StateFile {
  return { version: STATE_VERSION, metrics: {}, storeSets: {} };
}

/** The state a text holds, in this release's format; undefined for no text. Anything unusable is a usage error. */
export function parseState(text: string | undefined, path: string, options: StateLoadOptions): StateFile | undefined {
  return readState(text, path, options).file;
}

/**
 * Like `parseState`, with what the reader set aside to say once: a last-run record the schema refuses is dropped
 * (it only informs; the coverage is what the state is for), never the state with it.
 */
export function readState(
  text: string | undefined,
  path: string,
  options: StateLoadOptions,
): { file: StateFile | undefined; warnings: string[] } {
  if (text === undefined) return { file: undefined, warnings: [] };
  // Characters are at least as many bytes: beyond the bound, the text is not parsed at all.
  if (text.length > STATE_BOUNDS.textBytes) throw tooLargeState(path, text.length);
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
  const { kept, warning } = withoutBadLastRun(parsed, path);
  const file = upgrade(kept, path);
  checkState(file, path, options);
  return { file, warnings: warning === undefined ? [] : [warning] };
}

/** The parsed state without its last-run record when that record is one the schema refuses (versions 3 and 4 keep one). */
function withoutBadLastRun(parsed: unknown, path: string): { kept: unknown; warning?: string } {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { kept: parsed };
  const { lastRun, ...rest } = parsed as Record<string, unknown>;
  if (lastRun === undefined) return { kept: parsed };
  const checked = lastRunSchema.safeParse(lastRun);
  let problem: string | undefined;
  if (!checked.success) {
    const issue = checked.error.issues[0];
    problem = `${['lastRun', ...(issue?.path ?? []).map(String)].join('.')}: ${issue?.message ?? 'is invalid'}`;
  } else if (Number.isNaN(Date.parse(checked.data.time))) {
    problem = `lastRun.time ${JSON.stringify(checked.data.time)} is not a date-time`;
  }
  if (problem === undefined) return { kept: parsed };
  return {
    kept: rest,
    warning: `state file ${path}: the last run's record is unreadable (${problem}); the coverage is kept, the record left out`,
  };
}

/**
 * A state about to be written, checked as the reader will check it: a value the reader would refuse is a bug here,
 * never a file that breaks every later run.
 */
export function checkWritable(file: StateFile, path: string): void {
  const checked = stateSchema.safeParse(file);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new Error(`refusing to write state file ${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'is invalid'}`);
  }
}

/** Each earlier version is read by its own schema and upgraded one version at a time. */
function upgrade(parsed: unknown, path: string): StateFile {
  const current = stateSchema.safeParse(parsed);
  if (current.success) return current.data;
  const v4 = v4Schema.safeParse(parsed);
  if (v4.success) return upgradeV4(v4.data);
  const v3 = v3Schema.safeParse(parsed);
  if (v3.success) return upgradeV4(upgradeV3(v3.data));
  const v2 = v2Schema.safeParse(parsed);
  if (v2.success) return upgradeV4(upgradeV3(upgradeV2(v2.data, path)));
  const v1 = v1Schema.safeParse(parsed);
  if (v1.success) return upgradeV4(upgradeV3(upgradeV2(upgradeV1(v1.data), path)));
  const version = (parsed as { version?: unknown } | null)?.version;
  const schema = version === STATE_VERSION ? stateSchema : version === 4 ? v4Schema : version === 3 ? v3Schema : undefined;
  const issue = schema?.safeParse(parsed).error?.issues[0];
  const where = issue === undefined ? '' : `: ${issue.path.join('.')}: ${issue.message}`;
  throw new UsageError(`state file ${path} is not an area-metrics state file${where}; fix or delete it`);
}

/** A state larger than any this tool writes: damaged (or hostile), refused before it is read or parsed. */
export function tooLargeState(path: string, size: number): UsageError {
  return new UsageError(
    `state file ${path} is damaged: ${size} bytes, more than a state holds (${STATE_BOUNDS.textBytes}); fix or delete it`,
  );
}

/** How many items a key's list may hold, by list: more is a damaged state, refused before it is expanded. */
const LIST_BOUNDS = {
  complete: STATE_BOUNDS.ranges,
  accepted: STATE_BOUNDS.ranges,
  givenUp: STATE_BOUNDS.ranges,
  pending: STATE_BOUNDS.days,
  profiles: STATE_BOUNDS.days,
  storeFigures: STATE_BOUNDS.figureDays,
} as const;

/** Days that do not exist or lie in the future, unknown keys and dangling store sets would mislead `--catch-up`. */
function checkState(file: StateFile, path: string, options: StateLoadOptions): void {
  const current = today(options.now);
  // Today's window is not over, so no day after yesterday is final.
  const lastFinal = addDays(current, -1);
  const fail = (what: string): never => {
    throw new UsageError(`state file ${path}: ${what}; fix or delete it`);
  };
  const checkDay = (key: string, field: string, day: string, latest: CalendarDay): void => {
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
    for (const [list, most] of Object.entries(LIST_BOUNDS) as [keyof typeof LIST_BOUNDS, number][]) {
      const value = entry[list];
      const count = value === undefined ? 0 : Array.isArray(value) ? value.length : Object.keys(value).length;
      if (count > most) fail(`${key} ${list} is damaged: ${count} entries, more than a state keeps (${most})`);
    }
    checkRanges(key, 'complete', entry.complete);
    checkRanges(key, 'accepted', entry.accepted);
    checkRanges(key, 'givenUp', entry.givenUp);
    // Written by hand out of order: read as the days they name.
    for (const list of ['complete', 'accepted', 'givenUp'] as const) {
      const ranges = entry[list];
      if (ranges !== undefined && !isSortedAndApart(ranges)) entry[list] = rangesOfDays(daysOfRanges(ranges));
    }
    for (const day of Object.keys(entry.pending ?? {})) checkDay(key, 'pending day', day, current);
    for (const day of Object.keys(entry.profiles ?? {})) checkDay(key, 'profile day', day, lastFinal);
    for (const [day, [id]] of Object.entries(entry.storeFigures ?? {})) {
      checkDay(key, 'store figures day', day, lastFinal);
      if (file.storeSets[id] === undefined)
        fail(`${key} ${day}'s store figures name store set ${JSON.stringify(id)}, which is not in storeSets`);
    }
    if (entry.storeSet !== undefined && file.storeSets[entry.storeSet] === undefined) {
      fail(`${key} names store set ${JSON.stringify(entry.storeSet)}, which is not in storeSets`);
    }
  }
}

/**
 * Ranges as this release writes them: in order, with a day between each and the next. Checking that costs a day's
 * arithmetic per range; rebuilding them costs it per day, on every read of a state with a year of days.
 */
function isSortedAndApart(ranges: readonly DayRange[]): boolean {
  return ranges.every((range, index) => index === 0 || range[0] > addDays(ranges[index - 1]![1], 1));
}

/** The same days are checked on every read of a state: each distinct one is checked once. */
const knownValidDay = boundedMemo(isValidDay, 100_000);
