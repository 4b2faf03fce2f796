import { createRequire } from 'node:module';
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
/** RFC 4180 with LF line ends; a field holding CR is quoted too. */
const CSV_OPTIONS = { eof: false, record_delimiter: 'unix', quoted_match: /\r/ } as const;
type Stringify = (records: string[][], options: typeof CSV_OPTIONS) => string;
/**
 * csv-stringify does the quoting, loaded the first time a field needs it: plain values (nearly all: codes, dates,
 * numbers) pass as they are, exactly as csv-stringify passes them, so most runs never load its eight modules. A
 * synchronous require, since the encoder is synchronous; the package ships CommonJS beside its ESM.
 */
let stringify: Stringify | undefined;
const csvQuoted = boundedMemo((value) => {
  stringify ??= (createRequire(import.meta.url)('csv-stringify/sync') as { stringify: Stringify }).stringify;
  return stringify([[value]], CSV_OPTIONS);
}, ENCODED_VALUES_LIMIT);

/** One RFC 4180 field: as csv-stringify writes it, quoted (its quotes doubled) when it holds a comma, a quote, CR or LF. */
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
