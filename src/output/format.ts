import { stringify } from 'csv-stringify/sync';
import { COMMON_COLUMNS, columnNames, type MetricDescriptor, type MetricRow } from '../metrics/descriptors.js';

export type OutputFormat = 'csv' | 'ndjson';
export type OutputShape = 'rows' | 'results';

/** Rows per chunk handed to a writer: big enough to keep syscalls few, small enough to keep memory flat. */
const CHUNK_ROWS = 4096;

function* chunked<T>(items: readonly T[], render: (batch: readonly T[]) => string): Generator<string> {
  for (let start = 0; start < items.length; start += CHUNK_ROWS) yield render(items.slice(start, start + CHUNK_ROWS));
}

export function csvHeader(metric: MetricDescriptor): string {
  return stringify([columnNames(metric)], { eof: true, record_delimiter: 'unix' });
}

/**
 * Memoised text of repeated values: store codes, dates, days and zone names recur on nearly every row, and encoding
 * them once per distinct value instead of once per row is most of the cost of writing a unit. Bounded, so a feed of
 * all-distinct values cannot grow it without limit.
 */
class EncodedValues {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly encode: (value: string) => string,
    private readonly limit = 65_536,
  ) {}

  get(value: string): string {
    let encoded = this.cache.get(value);
    if (encoded === undefined) {
      encoded = this.encode(value);
      if (this.cache.size >= this.limit) this.cache.clear();
      this.cache.set(value, encoded);
    }
    return encoded;
  }
}

const CSV_OPTIONS = { eof: false, record_delimiter: 'unix', quoted_match: /\r/ } as const;
/** The only characters that make csv-stringify quote or escape a field with CSV_OPTIONS (delimiter, quote, CR, LF). */
const CSV_SPECIAL = /[",\r\n]/;
// csv-stringify quotes each field on its own, so one field's text is the same alone or within a record.
const csvQuoted = new EncodedValues((value) => stringify([[value]], CSV_OPTIONS));

/** One CSV field exactly as csv-stringify writes it with CSV_OPTIONS; plain values (nearly all) pass through as is. */
function csvField(text: string): string {
  return CSV_SPECIAL.test(text) ? csvQuoted.get(text) : text;
}

/** RFC 4180 CSV text of rows (quotes only where needed), LF line endings, the metric's exact column order. */
function csvRowsEncoder(metric: MetricDescriptor): (rows: readonly MetricRow[]) => string {
  const cells = [
    ...COMMON_COLUMNS.map((name) => (row: MetricRow) => String(row[name])),
    ...metric.columns.map((column) => column.csv ?? ((row: MetricRow) => String(row[column.name]))),
  ];
  const last = cells.length - 1;
  return (rows) => {
    let text = '';
    for (const row of rows) {
      for (let index = 0; index < last; index++) text += `${csvField(cells[index]!(row))},`;
      text += `${csvField(cells[last]!(row))}\n`;
    }
    return text;
  };
}

/** RFC 4180 CSV (quotes only where needed), LF line endings, the metric's exact column order. */
export function* csvChunks(metric: MetricDescriptor, rows: readonly MetricRow[]): Generator<string> {
  yield* chunked(rows, csvRowsEncoder(metric));
}

const jsonStrings = new EncodedValues((value) => JSON.stringify(value));

/** A value as JSON.stringify writes it inside an object (undefined: the key is left out, as JSON.stringify does). */
function jsonValue(value: string | number | undefined): string | undefined {
  if (typeof value === 'string') return jsonStrings.get(value);
  return value === undefined ? undefined : JSON.stringify(value);
}

/**
 * NDJSON text of rows: `metric` first, then the columns in order, with their NDJSON types. The same text as
 * JSON.stringify of that object, assembled from memoised pieces.
 */
function ndjsonRowsEncoder(metric: MetricDescriptor): (rows: readonly MetricRow[]) => string {
  const names = columnNames(metric);
  const head = `{${JSON.stringify('metric')}:${JSON.stringify(metric.name)}`;
  const keys = names.map((name) => `,${JSON.stringify(name)}:`);
  return (rows) => {
    let text = '';
    for (const row of rows) {
      text += head;
      for (let index = 0; index < names.length; index++) {
        const value = jsonValue(row[names[index]!]);
        if (value !== undefined) text += keys[index]! + value;
      }
      text += '}\n';
    }
    return text;
  };
}

/** One JSON object per line: `metric` first, then the columns in order, with their NDJSON types. */
export function* ndjsonRowChunks(metric: MetricDescriptor, rows: readonly MetricRow[]): Generator<string> {
  yield* chunked(rows, ndjsonRowsEncoder(metric));
}

/**
 * The encoder `fetchUnit` applies to each result's rows as they arrive (`encodeRows`), for the `rows` shape; the
 * `results` shape keeps the result objects instead. Same text as encoding the whole unit's rows at once.
 */
export function rowEncoder(format: OutputFormat): (metric: MetricDescriptor, rows: readonly MetricRow[]) => string {
  const encoders = new Map<string, (rows: readonly MetricRow[]) => string>();
  return (metric, rows) => {
    let encode = encoders.get(metric.name);
    if (encode === undefined) {
      encode = format === 'csv' ? csvRowsEncoder(metric) : ndjsonRowsEncoder(metric);
      encoders.set(metric.name, encode);
    }
    return encode(rows);
  };
}

/** `--shape results`: one line per API result object as received, with `metric` first. */
export function* ndjsonResultChunks(metric: MetricDescriptor, results: readonly unknown[]): Generator<string> {
  yield* chunked(results, (batch) =>
    batch.map((result) => `${JSON.stringify({ metric: metric.name, ...(result as object) })}\n`).join(''),
  );
}
