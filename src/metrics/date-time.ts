/**
 * The vendor's `date`: an ISO 8601 date-time with an offset, `YYYY-MM-DDThh:mm:ss[.fff](Z|±hh:mm)`. Parsed by hand
 * because every rule of the data contract needs a reason of its own, and because the instant is what repeats and
 * the requested window are compared by (two spellings of one instant are one result).
 */
export type DateTimeParse =
  | { readonly ok: true; readonly instant: number; readonly day: string }
  | { readonly ok: false; readonly reason: string };

const SHAPE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Offsets in use on Earth run from -12:00 to +14:00. */
const MIN_OFFSET_MINUTES = -12 * 60;
const MAX_OFFSET_MINUTES = 14 * 60;

const SHAPE_REASON = 'must be an ISO 8601 date-time with an offset, e.g. 2026-11-20T00:00:00+02:00';

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0);
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function parseOffsetDateTime(text: string): DateTimeParse {
  const match = SHAPE.exec(text);
  if (match === null) return { ok: false, reason: SHAPE_REASON };
  const [, y, mo, d, h, mi, s, fraction, sign, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: 'is not a real calendar date' };
  if (hour > 23 || minute > 59 || second > 59)
    return { ok: false, reason: 'is not a real time of day (hours < 24, minutes and seconds < 60)' };
  let offsetMinutes = 0;
  if (sign !== undefined) {
    const offsetHours = Number(oh);
    const offsetMinutePart = Number(om);
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutePart);
    if (offsetMinutePart > 59 || offsetMinutes < MIN_OFFSET_MINUTES || offsetMinutes > MAX_OFFSET_MINUTES) {
      return { ok: false, reason: 'has an offset outside -12:00..+14:00 (or minutes >= 60)' };
    }
  }
  const milliseconds = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000);
  const utc = new Date(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds));
  // Date.UTC reads years 0..99 as 1900..1999.
  if (year < 100) utc.setUTCFullYear(year);
  return { ok: true, instant: utc.getTime() - offsetMinutes * 60_000, day: text.slice(0, 10) };
}
