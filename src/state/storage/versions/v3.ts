import { z } from 'zod';
import { LAYOUTS } from '../../../output/layout.js';
import { DAY_MODES } from '../../../window/day-mode.js';
import { lastRunSchema, rangeSchema, storeCountSchema } from './parts.js';
import type { StateEntry, StateFile } from './v4.js';

const v3Entry = z.strictObject({
  complete: z.array(rangeSchema).optional(),
  accepted: z.array(rangeSchema).optional(),
  givenUp: z.array(rangeSchema).optional(),
  pending: z
    .record(
      z.string(),
      z.strictObject({
        reason: z.enum(['not-published', 'partly-published', 'not-over', 'failed', 'interrupted', 'reopened']),
        missingStores: storeCountSchema.optional(),
        stores: storeCountSchema.optional(),
      }),
    )
    .optional(),
  stores: storeCountSchema.optional(),
  storeSet: z.string().optional(),
});

/** Version 3: coverage as ranges, pending days with their reason, store sets, the last run, the day mode. */
export const v3Schema = z.strictObject({
  version: z.literal(3),
  metrics: z.record(z.string(), v3Entry),
  storeSets: z.record(z.string(), z.string()),
  lastRun: lastRunSchema.optional(),
  days: z.enum(DAY_MODES).optional(),
  /** `hive`: its files are `metric=<metric>/dt=<day>/...`; absent: `<metric>/<day>.<ext>` (every earlier release). */
  layout: z.enum(LAYOUTS).optional(),
});

export type V3File = z.infer<typeof v3Schema>;
export type V3Entry = z.infer<typeof v3Entry>;

/**
 * Version 3 wrote `interrupted` before a run's first request, for every day it was asked for: such a day was asked
 * for and never judged, which version 4 calls `asked` (it writes `interrupted` only when a run really ended first).
 */
export function upgradeV3(file: V3File): StateFile {
  const metrics: Record<string, StateEntry> = {};
  for (const [key, entry] of Object.entries(file.metrics)) {
    const { pending, ...rest } = entry;
    metrics[key] =
      pending === undefined
        ? rest
        : {
            ...rest,
            pending: Object.fromEntries(
              Object.entries(pending).map(([day, status]) => [
                day,
                { ...status, reason: status.reason === 'interrupted' ? 'asked' : status.reason },
              ]),
            ),
          };
  }
  return { ...file, version: 4, metrics };
}
