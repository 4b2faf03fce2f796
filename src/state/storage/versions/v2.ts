import { z } from 'zod';
import { UsageError } from '../../../errors.js';
import { isValidDay } from '../../../window/days.js';
import type { V3Entry, V3File } from './v3.js';

/** Version 2: per key the last complete day, its stores, and the pending days after it. */
export const v2Schema = z.strictObject({
  version: z.literal(2),
  metrics: z.record(
    z.string(),
    z.strictObject({
      lastCompleteDay: z.string().optional(),
      stores: z.number().int().min(0).optional(),
      storeSet: z.string().optional(),
      pending: z
        .record(
          z.string(),
          z.strictObject({
            reason: z.enum(['not-published', 'partial', 'not-over']),
            missingStores: z.number().int().min(0).optional(),
            stores: z.number().int().min(0).optional(),
          }),
        )
        .optional(),
    }),
  ),
  storeSets: z.record(z.string(), z.string()),
});

export type V2File = z.infer<typeof v2Schema>;

/**
 * Version 2 knew only where the contiguous run of complete days ended, not where it began: coverage starts at that
 * day. Its `partial` reason is `partly-published` from version 3 on.
 */
export function upgradeV2(file: V2File, path: string): V3File {
  const metrics: Record<string, V3Entry> = {};
  for (const [key, old] of Object.entries(file.metrics)) {
    const entry: V3Entry = {};
    if (old.lastCompleteDay !== undefined) {
      if (!isValidDay(old.lastCompleteDay)) {
        throw new UsageError(
          `state file ${path}: ${key} lastCompleteDay ${JSON.stringify(old.lastCompleteDay)} is not a valid day (YYYY-MM-DD); fix or delete it`,
        );
      }
      entry.complete = [[old.lastCompleteDay, old.lastCompleteDay]];
    }
    if (old.stores !== undefined) entry.stores = old.stores;
    if (old.storeSet !== undefined) entry.storeSet = old.storeSet;
    if (old.pending !== undefined) {
      entry.pending = Object.fromEntries(
        Object.entries(old.pending).map(([day, status]) => [
          day,
          { ...status, reason: status.reason === 'partial' ? 'partly-published' : status.reason },
        ]),
      );
    }
    metrics[key] = entry;
  }
  return { version: 3, metrics, storeSets: file.storeSets };
}
