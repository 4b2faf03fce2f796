import { boundedMemo } from '../memo.js';

/** `parquet` is for files only: a Parquet file is read from its footer, so it cannot be a stream. */
export const OUTPUT_FORMATS = ['csv', 'ndjson', 'parquet'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export type OutputShape = 'rows' | 'results';

export interface OutputEncoding {
  readonly format: OutputFormat;
  readonly shape: OutputShape;
}

/** The file extension of an encoding: `--shape results` is always NDJSON. */
export function extensionOf(encoding: OutputEncoding): OutputFormat {
  return encoding.shape === 'results' ? 'ndjson' : encoding.format;
}

/** One CSV record with its LF: each field on its own as `csvField` writes it. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\n`;
}

/** Store codes, dates and zone names recur on every result of a unit: each distinct one is quoted once. */
const ENCODED_VALUES_LIMIT = 65_536;

/** The characters that make a field quoted (RFC 4180: delimiter, quote, CR, LF). */
const CSV_SPECIAL = /[",\r\n]/;
const csvQuoted = boundedMemo((value) => `"${value.replaceAll('"', '""')}"`, ENCODED_VALUES_LIMIT);

/**
 * One RFC 4180 field: quoted, its quotes doubled, when it holds a comma, a quote, CR or LF; plain values (nearly all)
 * pass as they are. The same bytes csv-stringify writes (the tests hold the two to each other), without loading its
 * eight modules at every start.
 */
export function csvField(text: string): string {
  return CSV_SPECIAL.test(text) ? csvQuoted(text) : text;
}

/** A string as JSON text. */
export const jsonString: (text: string) => string = boundedMemo((value) => JSON.stringify(value), ENCODED_VALUES_LIMIT);

/** JSON.stringify, or undefined for a value nested deeper than the stack allows (a hostile body can be). */
export function jsonOrUndefined(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}
