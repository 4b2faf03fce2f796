import type { StoredResult } from './stored-result.js';

const LF = 10;
const CR = 13;
const QUOTE = 34;
const COMMA = 44;
const ASCII_END = 0x80;

/**
 * The lines after the header of a CSV of the writer's own columns (code, date, day, granularity, zone, then `names`),
 * as results without their zones, scanned once from its bytes: `text` is the same bytes as Latin-1 (a character a
 * byte), from which the code, date and values are cut where the scan found them. Only what the writer writes is read
 * so: a zone quoted or not (any bytes but a line break within it), every other field ASCII and unquoted; false at the
 * first line that is not, the results before it given already (the caller reads the file another way).
 */
export function eachWrittenCsvResult(
  bytes: Uint8Array,
  text: string,
  from: number,
  names: readonly string[],
  visit: (result: StoredResult) => void,
): boolean {
  const length = bytes.length;
  let last: StoredResult | undefined;
  /** The code and date of `last` with the comma after them, as they stand in the text. */
  let lastPrefix = '';
  let at = from;
  while (at < length) {
    const lineStart = at;
    const byte = bytes[at]!;
    if (byte === LF || (byte === CR && (at + 1 === length || bytes[at + 1] === LF))) {
      at += byte === CR ? 2 : 1;
      continue;
    }
    if (last !== undefined && text.startsWith(lastPrefix, at)) at += lastPrefix.length;
    else {
      const codeEnd = plainField(bytes, at);
      if (codeEnd < 0 || bytes[codeEnd] !== COMMA) return false;
      const dateEnd = plainField(bytes, codeEnd + 1);
      if (dateEnd < 0 || bytes[dateEnd] !== COMMA) return false;
      if (last !== undefined) visit(last);
      last = { store_code: text.slice(lineStart, codeEnd), date: text.slice(codeEnd + 1, dateEnd), granularity: 'daily', values: [] };
      lastPrefix = text.slice(lineStart, dateEnd + 1);
      at = dateEnd + 1;
    }
    // The day and granularity, not handed on: any bytes but a quote, a comma or a line's end.
    for (let field = 0; field < 2; field++) {
      at = skippedField(bytes, at);
      if (at < 0 || bytes[at] !== COMMA) return false;
      at++;
    }
    at = bytes[at] === QUOTE ? quotedEnd(bytes, at) : skippedField(bytes, at);
    if (at < 0) return false;
    const entry: Record<string, unknown> = {};
    for (const name of names) {
      if (at >= length || bytes[at] !== COMMA) {
        entry[name] = undefined;
        continue;
      }
      const valueStart = at + 1;
      at = plainField(bytes, valueStart);
      if (at < 0) return false;
      entry[name] = text.slice(valueStart, at);
    }
    // Fields after the values are not read, as long as none is quoted.
    at = skippedRest(bytes, at);
    if (at < 0) return false;
    last.values.push(entry);
  }
  if (last !== undefined) visit(last);
  return true;
}

/** The end of an ASCII field without a quote from `at` (a comma, a line's end, the end); -1 for any other byte. */
function plainField(bytes: Uint8Array, at: number): number {
  for (; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === COMMA || byte === LF) return at;
    if (byte === QUOTE || byte >= ASCII_END) return -1;
    if (byte === CR) return lineEndAt(bytes, at) ? at : -1;
  }
  return at;
}

/** The end of a field not handed on (any bytes but a quote); -1 at a quote. */
function skippedField(bytes: Uint8Array, at: number): number {
  for (; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === COMMA || byte === LF) return at;
    if (byte === QUOTE) return -1;
    if (byte === CR) return lineEndAt(bytes, at) ? at : -1;
  }
  return at;
}

/** The end of a quoted field starting at `at` (`""` a quote within it), which ends its line or is followed by a comma. */
function quotedEnd(bytes: Uint8Array, at: number): number {
  for (at++; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === LF) return -1;
    if (byte !== QUOTE) continue;
    if (bytes[at + 1] === QUOTE) {
      at++;
      continue;
    }
    const next = at + 1;
    if (next === bytes.length || bytes[next] === COMMA || bytes[next] === LF) return next;
    return bytes[next] === CR && lineEndAt(bytes, next) ? next : -1;
  }
  return -1;
}

/** Past the line's end from `at` (its line break, or the end); -1 if a quote comes first. */
function skippedRest(bytes: Uint8Array, at: number): number {
  for (; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte === LF) return at + 1;
    if (byte === QUOTE) return -1;
  }
  return at;
}

/** Whether a carriage return at `at` ends its line (a line break or the end follows), as a line's reader drops it. */
function lineEndAt(bytes: Uint8Array, at: number): boolean {
  return at + 1 === bytes.length || bytes[at + 1] === LF;
}
