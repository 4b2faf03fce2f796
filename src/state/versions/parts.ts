import { z } from 'zod';

/** The pieces versions 3 and 4 share; a later version that changes one defines its own. */

/** Days as an inclusive `[first, last]` range. */
export const rangeSchema = z.tuple([z.string(), z.string()]);

export const lastRunSchema = z.strictObject({
  /** When the run ended, ISO 8601 UTC. */
  time: z.string(),
  command: z.string(),
  exitCode: z.number().int().min(0),
  /** Rows written per metric. */
  rows: z.record(z.string(), z.number().int().min(0)),
});

export const storeCountSchema = z.number().int().min(0);
