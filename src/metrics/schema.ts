import { z } from 'zod';
import { boundedMemo } from '../memo.js';
import { parseOffsetDateTime, type DateTimeParse } from './date-time.js';

/**
 * The data contract, in zod. Every record is held to it: `check.ts` takes a shortcut for records that are plainly
 * valid, and a test holds the shortcut to exactly these schemas; a record the shortcut does not vouch for is parsed
 * here, which also names the broken field.
 */

/** The paginated envelope of every metric resource. Results are checked one by one afterwards. */
export const envelopeSchema = z.object({
  count: z.int().nonnegative(),
  next: z.url().nullable(),
  previous: z.url().nullable(),
  results: z.array(z.unknown()),
});
export type Envelope = z.infer<typeof envelopeSchema>;

/** A unit carries only a few distinct `date` strings (one per store offset), so each is parsed once. */
export const dateTimeOf: (text: string) => DateTimeParse = boundedMemo(parseOffsetDateTime, 4096);

export const LONE_SURROGATE_REASON = 'holds a lone surrogate (not valid Unicode text)';
const NON_EMPTY_REASON = 'must be a non-empty string';

/** Free text (store codes, zone names): non-empty, and valid Unicode so that two names never collapse into one. */
const text = z
  .string({ error: NON_EMPTY_REASON })
  .min(1, { error: NON_EMPTY_REASON })
  .refine((value) => value.isWellFormed(), { error: LONE_SURROGATE_REASON });

export const offsetDateTime = z.string({ error: 'must be a string' }).superRefine((value, context) => {
  const parsed = dateTimeOf(value);
  if (!parsed.ok) context.addIssue({ code: 'custom', message: parsed.reason });
});

export const uniqueUsersValue = z.int({ error: 'must be an integer' }).nonnegative({ error: 'must be >= 0' });

/** A day has 24 hours; up to 9999 leaves room for whatever the vendor could mean, and keeps seconds an exact integer. */
export const SCREEN_TIME = /^\d{2,4}:[0-5]\d:[0-5]\d$/;
export const avgScreenTimeValue = z
  .string({ error: 'must be a string HH:MM:SS' })
  .regex(SCREEN_TIME, { error: 'must be HH:MM:SS with hours up to 9999 and minutes and seconds below 60' });

/** A decimal string from 0 to 1 inclusive ("0.25000", "1.00000"). */
export const TRAFFIC_PCT = /^0*(?:0(?:\.\d+)?|1(?:\.0+)?)$/;
export const trafficPctValue = z.string({ error: 'must be a decimal string' }).regex(TRAFFIC_PCT, { error: 'must be a decimal string in [0, 1]' });

export function screenTimeSeconds(hhmmss: string): number {
  // Called once per row, on a value SCREEN_TIME admitted: slicing at the two colons avoids split's arrays.
  const first = hhmmss.indexOf(':');
  return Number(hhmmss.slice(0, first)) * 3600 + Number(hhmmss.slice(first + 1, first + 3)) * 60 + Number(hhmmss.slice(first + 4));
}

/** The zone name of an entry: `zone` (what the payloads carry) or `zone_name` (what the API's document names). */
export function zoneOf(entry: Readonly<Record<string, unknown>>): string {
  return String(entry.zone ?? entry.zone_name);
}

/** One result object whose `values` entries carry `valueKey`; zone names are unique within it. */
export function resultSchema<V extends z.ZodType>(valueKey: string, value: V) {
  const entry = z.object({ zone: text.optional(), zone_name: text.optional(), [valueKey]: value });
  return z
    .object({
      store_code: text,
      date: offsetDateTime,
      granularity: z.literal('daily', { error: 'must be "daily"' }),
      values: z.array(entry, { error: 'must be an array' }),
    })
    .superRefine((result, context) => {
      // Once per result rather than a refinement per zone entry.
      const seen = new Set<string>();
      for (const [index, candidate] of result.values.entries()) {
        if (candidate.zone === undefined && candidate.zone_name === undefined) {
          context.addIssue({ code: 'custom', message: 'is missing (neither zone nor zone_name)', path: ['values', index, 'zone'] });
          return;
        }
        const zone = zoneOf(candidate);
        if (seen.has(zone)) {
          const key = candidate.zone === undefined ? 'zone_name' : 'zone';
          context.addIssue({ code: 'custom', message: 'repeats a zone of the same result', path: ['values', index, key] });
          return;
        }
        seen.add(zone);
      }
    });
}
