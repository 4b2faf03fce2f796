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
export const CONTROL_CHARACTER_REASON = 'holds a control character (U+0000 to U+001F)';
const NON_EMPTY_REASON = 'must be a non-empty string';

/** U+0000 to U+001F: a NUL or a line break in a name would be written raw into a CSV cell or a file's name. */
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const CONTROL_CHARACTER = /[\u0000-\u001f]/;

/** Whether a name holds a control character. */
export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/**
 * Free text (store codes, zone names): non-empty, valid Unicode so that two names never collapse into one, and no
 * control character.
 */
const text = z
  .string({ error: NON_EMPTY_REASON })
  .min(1, { error: NON_EMPTY_REASON })
  .refine((value) => value.isWellFormed(), { error: LONE_SURROGATE_REASON })
  .refine((value) => !hasControlCharacter(value), { error: CONTROL_CHARACTER_REASON });

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
export const trafficPctValue = z
  .string({ error: 'must be a decimal string' })
  .regex(TRAFFIC_PCT, { error: 'must be a decimal string in [0, 1]' });

export function screenTimeSeconds(hhmmss: string): number {
  // Called once per row, on a value SCREEN_TIME admitted (digits and two colons): read digit by digit, no substrings.
  const digit = (index: number): number => hhmmss.charCodeAt(index) - 48;
  const colon = hhmmss.length - 6;
  let hours = 0;
  for (let index = 0; index < colon; index++) hours = hours * 10 + digit(index);
  return hours * 3600 + (digit(colon + 1) * 10 + digit(colon + 2)) * 60 + digit(colon + 4) * 10 + digit(colon + 5);
}

/** The zone name of an entry: `zone` (what the payloads carry) or `zone_name` (what the API's document names). */
export function zoneOf(entry: Readonly<Record<string, unknown>>): string {
  return String(entry.zone ?? entry.zone_name);
}

/** Code-unit order (not locale order), so files are identical on every machine. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

type ZoneEntry = Readonly<Record<string, unknown>>;

/** Up to this many entries are ordered by insertion sort (no per-entry objects); a longer list by Array.sort. */
const INSERTION_SORT_MAX = 64;

/** The last list `entriesByZone` ordered, and the order: the contract check and the encoder both ask for it. */
let lastValues: readonly ZoneEntry[] | undefined;
let lastOrdered: readonly ZoneEntry[] = [];

/**
 * A result's zone entries in code-unit order of their zone names (stable for equal names). The API usually sends
 * them sorted, which is checked first and returns the list itself.
 */
export function entriesByZone<E extends ZoneEntry>(values: readonly E[]): readonly E[] {
  if (values === lastValues) return lastOrdered as readonly E[];
  let previous = '';
  for (const entry of values) {
    const zone = zoneOf(entry);
    if (zone < previous) {
      lastOrdered = values.length <= INSERTION_SORT_MAX ? insertionSorted(values) : arraySorted(values);
      lastValues = values;
      return lastOrdered as readonly E[];
    }
    previous = zone;
  }
  return values;
}

function insertionSorted<E extends ZoneEntry>(values: readonly E[]): E[] {
  const entries = values.slice();
  const zones = entries.map(zoneOf);
  for (let index = 1; index < entries.length; index++) {
    const entry = entries[index] as E;
    const zone = zones[index] as string;
    let at = index - 1;
    for (; at >= 0 && (zones[at] as string) > zone; at--) {
      entries[at + 1] = entries[at] as E;
      zones[at + 1] = zones[at] as string;
    }
    entries[at + 1] = entry;
    zones[at + 1] = zone;
  }
  return entries;
}

function arraySorted<E extends ZoneEntry>(values: readonly E[]): E[] {
  const keyed = values.map((entry) => ({ entry, zone: zoneOf(entry) }));
  return keyed.sort((a, b) => compareText(a.zone, b.zone)).map(({ entry }) => entry);
}

/** Whether two entries of a result share a zone name. */
export function hasRepeatedZone(values: readonly ZoneEntry[]): boolean {
  const ordered = entriesByZone(values);
  for (let index = 1; index < ordered.length; index++) {
    if (zoneOf(ordered[index] as ZoneEntry) === zoneOf(ordered[index - 1] as ZoneEntry)) return true;
  }
  return false;
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
