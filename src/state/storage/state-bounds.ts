/**
 * What a state can legitimately hold, so that reading one costs memory bounded by it: a damaged or hostile state
 * beyond these is refused as damaged before it is inflated or expanded. Each bound is what the writer keeps, with room.
 */
export const STATE_BOUNDS = {
  /**
   * The state's text: 70 days of figures of three metrics of 100,000 stores each (two bytes a store, in Base64) are
   * under 60 MiB; a chain of 20,000 stores keeps about 11 MiB.
   */
  textBytes: 64 * 1024 * 1024,
  /** Days of store figures a key keeps: the per-store rule's eight weeks and two more for days judged late. */
  figureDays: 70,
  /** Days of profiles a key keeps: a year (what a write trims them to; a reader takes up to `days`). */
  profileDays: 366,
  /** Ranges in one list of a key (complete, accepted, given up): a day on, a day off, for 500 years. */
  ranges: 100_000,
  /** Days in a key's list of one entry a day (pending days, profiles): centuries of backfill asked for. */
  days: 100_000,
  /** Stores in one set. */
  stores: 1_000_000,
  /** Bytes a store code takes in a set's JSON (with its quotes and comma): store codes are a few characters. */
  storeCodeBytes: 1024,
  /** Bytes a store set inflates to, whatever it claims: 1,000,000 codes of 60 characters. */
  storeSetBytes: 64 * 1024 * 1024,
} as const;
