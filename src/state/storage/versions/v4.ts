import { z } from 'zod';
import { OUTPUT_FORMATS } from '../../../output/format.js';
import { LAYOUTS } from '../../../output/layout.js';
import { DAY_MODES } from '../../../window/day-mode.js';
import { lastRunSchema, rangeSchema, storeCountSchema } from './parts.js';

/**
 * Why a day is not final yet. The first four are the vendor's (judged from the data: `suspect` is complete data whose
 * numbers look wrong), `failed`, `asked` and `interrupted` the run's (a unit failed; the day was asked for and not
 * judged yet, written before the first request; the run ended before judging it), `reopened` a person's
 * (`area-metrics reopen`).
 */
export const PENDING_REASONS = [
  'not-published',
  'partly-published',
  'not-over',
  'suspect',
  'failed',
  'asked',
  'interrupted',
  'reopened',
] as const;

export const pendingSchema = z.strictObject({
  reason: z.enum(PENDING_REASONS),
  /** With `partly-published`: stores of the metric's latest complete day that this window lacks. */
  missingStores: storeCountSchema.optional(),
  /** Stores the window had. */
  stores: storeCountSchema.optional(),
  /** With `suspect`: the measure, the day's total, the median it was judged by, and whether every value was zero. */
  measure: z.string().optional(),
  value: z.number().optional(),
  median: z.number().optional(),
  allZero: z.literal(true).optional(),
});

export type PendingDay = z.infer<typeof pendingSchema>;

export const entrySchema = z.strictObject({
  /** Days whose data is final, as ranges. */
  complete: z.array(rangeSchema).optional(),
  /** Days settled by hand as final whatever their data (`area-metrics accept`). */
  accepted: z.array(rangeSchema).optional(),
  /** Days still unpublished `--give-up-days` after their window ended: no longer asked for, but still a gap. */
  givenUp: z.array(rangeSchema).optional(),
  /** Days asked for that are not final, and why. */
  pending: z.record(z.string(), pendingSchema).optional(),
  /** How many stores reported on the latest complete day, and which: the id of a set in `storeSets`. */
  stores: storeCountSchema.optional(),
  storeSet: z.string().optional(),
  /**
   * The profile of each complete day of the last year: results, stores, rows and the metric's total (one line a day),
   * what a later day's numbers are judged by.
   */
  profiles: z.record(z.string(), z.tuple([storeCountSchema, storeCountSchema, storeCountSchema, z.number().min(0)])).optional(),
});

/** The format this release writes. */
export const stateSchema = z.strictObject({
  version: z.literal(4),
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
  /** The files' format, recorded by the first run that knows it; absent: not known (every earlier release). */
  format: z.enum(OUTPUT_FORMATS).optional(),
});

export type StateFile = z.infer<typeof stateSchema>;
export type StateEntry = z.infer<typeof entrySchema>;
export type LastRun = z.infer<typeof lastRunSchema>;
