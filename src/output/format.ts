import { stringify } from 'csv-stringify/sync';
import { boundedMemo } from '../memo.js';
import { COMMON_COLUMNS, columnNames, type MetricDescriptor, type MetricRow } from '../metrics/descriptors.js';

export type OutputFormat = 'csv' | 'ndjson';
export type OutputShape = 'rows' | 'results';

export interface OutputEncoding {
  readonly format: OutputFormat;
  readonly shape: OutputShape;
}

export function csvHeader(metric: MetricDescriptor): string {
  return stringify([columnNames(metric)], { eof: true, record_delimiter: 'unix' });
}

/**
 * Store codes, dates, days and zone names recur on nearly every row: encoding each distinct value once instead of
 * once per row is most of the cost of writing a unit.
 */
const ENCODED_VALUES_LIMIT = 65_536;

const CSV_OPTIONS = { eof: false, record_delimiter: 'unix', quoted_match: /\r/ } as const;
/** The only characters that make csv-stringify quote or escape a field with CSV_OPTIONS (delimiter, quote, CR, LF). */
const CSV_SPECIAL = /[",\r\n]/;
// csv-stringify quotes each field on its own, so one field's text is the same alone or within a record.
const csvQuoted = boundedMemo((value) => stringify([[value]], CSV_OPTIONS), ENCODED_VALUES_LIMIT);

/** One CSV field exactly as csv-stringify writes it with CSV_OPTIONS; plain values (nearly all) pass through as is. */
function csvField(text: string): string {
  return CSV_SPECIAL.test(text) ? csvQuoted(text) : text;
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

const jsonString = boundedMemo((value) => JSON.stringify(value), ENCODED_VALUES_LIMIT);

/** A value as JSON.stringify writes it inside an object (undefined: the key is left out, as JSON.stringify does). */
function jsonValue(value: string | number | undefined): string | undefined {
  if (typeof value === 'string') return jsonString(value);
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

/**
 * The text of one validated result, as it will be written: its rows (already sorted by zone) as CSV or NDJSON lines,
 * or for `--shape results` the result object itself as one NDJSON line with `metric` first. A unit is the
 * concatenation of its results' texts in (store_code, date) order.
 */
export type ResultEncoder = (metric: MetricDescriptor, rows: readonly MetricRow[], record: unknown) => string;

export function resultEncoder(encoding: OutputEncoding): ResultEncoder {
  if (encoding.shape === 'results') {
    return (metric, _rows, record) => `${JSON.stringify({ metric: metric.name, ...(record as object) })}\n`;
  }
  const encoders = new Map<string, (rows: readonly MetricRow[]) => string>();
  return (metric, rows) => {
    let encode = encoders.get(metric.name);
    if (encode === undefined) {
      encode = encoding.format === 'csv' ? csvRowsEncoder(metric) : ndjsonRowsEncoder(metric);
      encoders.set(metric.name, encode);
    }
    return encode(rows);
  };
}

/** The CSV header row, for the `rows` shape in CSV; nothing otherwise. */
export function headerOf(metric: MetricDescriptor, encoding: OutputEncoding): string | undefined {
  return encoding.shape === 'rows' && encoding.format === 'csv' ? csvHeader(metric) : undefined;
}
