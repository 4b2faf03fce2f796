import { stringify } from 'csv-stringify/sync';
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

const CSV_OPTIONS = { eof: false, record_delimiter: 'unix', quoted_match: /\r/ } as const;

/** One CSV record with its LF, RFC 4180 quoting as csv-stringify writes it. */
export function csvLine(fields: readonly string[]): string {
  return `${stringify([fields], CSV_OPTIONS)}\n`;
}

/** Store codes, dates and zone names recur on every result of a unit: each distinct one is quoted or escaped once. */
const ENCODED_VALUES_LIMIT = 65_536;

/** The only characters that make csv-stringify quote or escape a field with CSV_OPTIONS (delimiter, quote, CR, LF). */
const CSV_SPECIAL = /[",\r\n]/;
// csv-stringify quotes each field on its own, so one field's text is the same alone or within a record.
const csvQuoted = boundedMemo((value) => stringify([[value]], CSV_OPTIONS), ENCODED_VALUES_LIMIT);

/** One RFC 4180 field exactly as csv-stringify writes it with CSV_OPTIONS; plain values (nearly all) pass as is. */
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
