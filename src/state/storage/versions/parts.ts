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
  /** Requests the run sent (retries included), the 429s among the answers, and the pace it reached (requests a second). */
  requests: z.number().int().min(0).optional(),
  throttled: z.number().int().min(0).optional(),
  paceRps: z.number().positive().optional(),
});

export const storeCountSchema = z.number().int().min(0);
