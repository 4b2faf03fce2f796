import type { StoredResult } from '../output/read-back.js';
import type { CalendarDay } from '../window/days.js';

/** A unit as the output holds it: where, and its results read back. */
export interface StoredUnit {
  readonly place: string;
  read(): Promise<StoredResult[]>;
  /** Its results one at a time without their zones, none kept, to add up (`eachStoredResult`); else read whole. */
  each?(visitor: () => (result: StoredResult) => void): Promise<void>;
}

/** What an output holds, read back by unit (no request to the vendor): a backtest's input. */
export interface StoredUnits {
  /** A metric's units by day: a file each (one a store with `--store`), or a database table's rows of the day. */
  unitsOf(metric: string): Promise<ReadonlyMap<CalendarDay, readonly StoredUnit[]>>;
  close(): Promise<void>;
}
