import { DateTime } from 'luxon';
import { z } from 'zod';
import { boundedMemo } from '../memo.js';

/** The paginated envelope of every metric resource (seed 2.1). Results are validated one by one afterwards. */
export const envelopeSchema = z.object({
  count: z.int().nonnegative(),
  next: z.url().nullable(),
  previous: z.url().nullable(),
  results: z.array(z.unknown()),
});
export type Envelope = z.infer<typeof envelopeSchema>;

const OFFSET_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Luxon's ISO parse is the costliest step of validating a record, and a unit carries only a few distinct `date`
 * strings (one per store offset), so each is parsed once.
 */
const isRealDateTime = boundedMemo((value) => DateTime.fromISO(value, { setZone: true }).isValid, 4096);

/** ISO 8601 date-time that carries its offset (`Z` counts); the calendar must be real (no 2026-02-30). */
export const offsetDateTime = z
  .string()
  .regex(OFFSET_DATE_TIME, { error: 'must be an ISO 8601 date-time with an offset, e.g. 2026-11-20T00:00:00+02:00' })
  .refine((value) => isRealDateTime(value), { error: 'is not a real date-time' });

/**
 * The calendar date of a validated `date` in its own offset (SPEC 2.2: no conversion to UTC). OFFSET_DATE_TIME
 * writes the date first, in the offset the time is given in, so that is its first ten characters.
 */
export function localDay(date: string): string {
  return date.slice(0, 10);
}

export const uniqueUsersValue = z.int({ error: 'must be an integer' }).nonnegative({ error: 'must be >= 0' });

export const avgScreenTimeValue = z
  .string({ error: 'must be a string HH:MM:SS' })
  .regex(/^\d{2,}:[0-5]\d:[0-5]\d$/, { error: 'must be HH:MM:SS with minutes and seconds below 60' });

/** A decimal string from 0 to 1 inclusive ("0.25000", "1.00000"); one regex instead of a regex and a number check. */
export const trafficPctValue = z
  .string({ error: 'must be a decimal string' })
  .regex(/^0*(?:0(?:\.\d+)?|1(?:\.0+)?)$/, { error: 'must be a decimal string in [0, 1]' });

export function screenTimeSeconds(hhmmss: string): number {
  // Called once per row: slicing at the two colons avoids the arrays of split/map.
  const first = hhmmss.indexOf(':');
  const second = first < 0 ? -1 : hhmmss.indexOf(':', first + 1);
  if (second < 0 || hhmmss.indexOf(':', second + 1) >= 0) {
    const [hours = 0, minutes = 0, seconds = 0] = hhmmss.split(':').map(Number);
    return hours * 3600 + minutes * 60 + seconds;
  }
  return Number(hhmmss.slice(0, first)) * 3600 + Number(hhmmss.slice(first + 1, second)) * 60 + Number(hhmmss.slice(second + 1));
}

/**
 * One result object (seed 2.2) whose `values` entries carry `valueKey`. The zone name is read from `zone` (what the
 * payloads carry) or `zone_name` (what the document names).
 */
export function resultSchema<V extends z.ZodType>(valueKey: string, value: V) {
  const zoneName = z.string().min(1, { error: 'must be a non-empty string' }).optional();
  const entry = z.object({ zone: zoneName, zone_name: zoneName, [valueKey]: value });
  return z
    .object({
      store_code: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }),
      date: offsetDateTime,
      granularity: z.literal('daily', { error: 'must be "daily"' }),
      values: z.array(entry, { error: 'must be an array' }),
    })
    .superRefine((result, context) => {
      // One check per result rather than a refinement per zone entry: it runs for every zone of every record.
      const index = result.values.findIndex((candidate) => candidate.zone === undefined && candidate.zone_name === undefined);
      if (index >= 0) context.addIssue({ code: 'custom', message: 'is missing (neither zone nor zone_name)', path: ['values', index, 'zone'] });
    });
}
