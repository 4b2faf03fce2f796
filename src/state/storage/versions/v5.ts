import { z } from 'zod';
import { storeCountSchema } from './parts.js';
import { entrySchema as v4Entry, pendingSchema as v4Pending, stateSchema as v4Schema, type StateFile as V4File } from './v4.js';

export { PENDING_REASONS } from './v4.js';

/** A held suspect day names how many stores were found, the first of them, and the factor of a whole day's move. */
const pendingSchema = v4Pending.extend({
  suspectStores: storeCountSchema.optional(),
  firstStores: z.array(z.string()).max(5).optional(),
  factor: z.number().min(0).optional(),
});

/**
 * A day's figure per store: the id of its store set (in `storeSets`), the figures as two bytes a store in Base64, and
 * 1 when the day was judged suspect (then it judges later days only once accepted), with the stores it found.
 */
const storeFiguresSchema = z.union([
  // 0: complete, with stores found at a new level; 1: judged suspect, with the stores it found.
  z.tuple([z.string(), z.string(), z.union([z.literal(0), z.literal(1)]), z.array(z.string())]),
  z.tuple([z.string(), z.string(), z.literal(1)]),
  z.tuple([z.string(), z.string()]),
]);

const entrySchema = v4Entry.extend({
  pending: z.record(z.string(), pendingSchema).optional(),
  /** Each store's figure of the recent days judged (eight weeks and a few): what a later store's day is judged by. */
  storeFigures: z.record(z.string(), storeFiguresSchema).optional(),
});

/** The format this release writes. */
export const stateSchema = v4Schema.extend({ version: z.literal(5), metrics: z.record(z.string(), entrySchema) });

export type StateFile = z.infer<typeof stateSchema>;
export type StateEntry = z.infer<typeof entrySchema>;
export type PendingDay = z.infer<typeof pendingSchema>;
export type StoreFiguresDay = z.infer<typeof storeFiguresSchema>;

/** Version 4 had no store figures: they start with the next day judged. */
export function upgradeV4(file: V4File): StateFile {
  return { ...file, version: 5 };
}
