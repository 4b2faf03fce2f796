import { UsageError } from '../errors.js';
import { rangesHold } from '../window/day-ranges.js';
import { addDays, type CalendarDay } from '../window/days.js';
import { decodeFigures, encodeFigures, storeFigures, type StoreFigures } from './judgement/store-figures.js';
import { STORE_RULE } from './judgement/store-rule.js';
import { STATE_BOUNDS } from './storage/state-bounds.js';
import { decodeStoreSet, encodeStoreSet, storeSetId } from './storage/store-sets.js';
import type { StateEntry, StateFile, StoreFiguresDay } from './storage/versions/current.js';

/** A judged day's figure per store, as the import hands it to the state. */
export interface JudgedFigures {
  /** Sorted store codes. */
  readonly codes: readonly string[];
  readonly values: Float64Array;
  /** Judged suspect: kept (accepting the day puts it in the history) but not in the history meanwhile. */
  readonly suspect: boolean;
  /** The stores it found suspect on their own. */
  readonly found?: readonly string[];
}

/** Days of figures kept behind the newest: the rule's eight weeks, and two more for days judged late (the reader's bound too). */
const FIGURE_DAYS = STATE_BOUNDS.figureDays;

/** Records the day's figures in the entry (of a freshly read state), dropping those too old to judge by. */
export function recordFigures(file: StateFile, entry: StateEntry, day: CalendarDay, figures: JudgedFigures): void {
  const id = storeSetId(figures.codes);
  if (file.storeSets[id] === undefined) file.storeSets[id] = encodeStoreSet(figures.codes);
  const text = encodeFigures(figures.values);
  const found = figures.found ?? [];
  const flag = figures.suspect ? 1 : 0;
  const record: StoreFiguresDay = found.length > 0 ? [id, text, flag, [...found]] : figures.suspect ? [id, text, 1] : [id, text];
  const kept = { ...entry.storeFigures, [day]: record };
  const days = Object.keys(kept).sort();
  const oldest = addDays(days.at(-1)!, -FIGURE_DAYS + 1);
  for (const old of days) {
    if (old >= oldest) break;
    delete kept[old];
  }
  entry.storeFigures = kept;
}

/**
 * The figures a later day is judged by: those of complete days not judged suspect, and of accepted days (a person
 * said their numbers are right). Decoded when the rule asks for them, each day once in `decoded`'s life.
 */
export function storeHistory(
  file: StateFile,
  entry: StateEntry | undefined,
  path: string,
  decoded: DecodedFigures = new DecodedFigures(),
): (day: CalendarDay) => StoreFigures | undefined {
  return (day) => {
    const kept = entry?.storeFigures?.[day];
    if (kept === undefined) return undefined;
    const accepted = rangesHold(entry?.accepted ?? [], day);
    if (!accepted && (kept[2] === 1 || !rangesHold(entry?.complete ?? [], day))) return undefined;
    return decoded.figuresOf(file, path, day, kept);
  };
}

/**
 * One metric's store figures as decoded so far in a run. The state is read again at every write, so a day's record
 * is decoded again only when its text changed; a store set once, its id being its content's hash.
 */
export class DecodedFigures {
  private readonly sets = new Map<string, { readonly codes: readonly string[]; readonly indexOf: ReadonlyMap<string, number> }>();
  private readonly days = new Map<CalendarDay, { readonly id: string; readonly text: string; readonly figures: StoreFigures }>();

  figuresOf(file: StateFile, path: string, day: CalendarDay, [id, text]: StoreFiguresDay): StoreFigures {
    const known = this.days.get(day);
    if (known !== undefined && known.id === id && known.text === text) return known.figures;
    // Two bytes a store: the set holds as many stores as the figures.
    const set = this.storeSet(file, path, id, Buffer.byteLength(text, 'base64') / 2);
    const values = decodeFigures(text, set.codes.length);
    if (values === undefined)
      throw new UsageError(`state file ${path}: the store figures of ${day} do not match their store set; fix or delete them`);
    const figures = storeFigures(set.codes, values, set.indexOf);
    this.days.set(day, { id, text, figures });
    this.dropOldest();
    return figures;
  }

  /**
   * The state keeps a day's figures `FIGURE_DAYS` behind its newest: a day older than those decoded is not asked
   * again (a backtest's year would keep 365 days of 20,000 stores' figures a metric). Were it, it is decoded again.
   */
  private dropOldest(): void {
    if (this.days.size <= FIGURE_DAYS) return;
    let oldest: CalendarDay | undefined;
    for (const day of this.days.keys()) if (oldest === undefined || day < oldest) oldest = day;
    this.days.delete(oldest!);
  }

  private storeSet(
    file: StateFile,
    path: string,
    id: string,
    stores: number,
  ): { readonly codes: readonly string[]; readonly indexOf: ReadonlyMap<string, number> } {
    let set = this.sets.get(id);
    if (set === undefined) {
      const codes = decodeStoreSet(file.storeSets[id], path, id, Math.ceil(stores));
      set = { codes, indexOf: new Map(codes.map((code, index) => [code, index])) };
      this.sets.set(id, set);
    }
    return set;
  }
}

/**
 * The stores a suspect day of the eight weeks before `day` already found, held or not: one finding each, not one a
 * night (a store closed for good is named once; its zeros become its history as the days after it are recorded).
 */
export function foundStores(entry: StateEntry | undefined, day: CalendarDay): ReadonlySet<string> {
  const found = new Set<string>();
  const oldest = addDays(day, -STORE_RULE.weeks * 7);
  for (const [other, record] of Object.entries(entry?.storeFigures ?? {})) {
    if (other >= oldest && other < day) for (const store of record[3] ?? []) found.add(store);
  }
  return found;
}
