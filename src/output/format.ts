import { stringify } from 'csv-stringify/sync';
import { boundedMemo } from '../memo.js';
import { columnNames, compareText, zoneOf, type MetricDescriptor, type MetricResult } from '../metrics/descriptors.js';
import { localDay } from '../metrics/schema.js';

export type OutputFormat = 'csv' | 'ndjson';
export type OutputShape = 'rows' | 'results';

export interface OutputEncoding {
  readonly format: OutputFormat;
  readonly shape: OutputShape;
}

export function csvHeader(metric: MetricDescriptor): string {
  return stringify([columnNames(metric)], { eof: true, record_delimiter: 'unix' });
}

/** Zone names recur on every result of a unit: each distinct one is quoted or escaped once. */
const ENCODED_VALUES_LIMIT = 65_536;

const CSV_OPTIONS = { eof: false, record_delimiter: 'unix', quoted_match: /\r/ } as const;
/** The only characters that make csv-stringify quote or escape a field with CSV_OPTIONS (delimiter, quote, CR, LF). */
const CSV_SPECIAL = /[",\r\n]/;
// csv-stringify quotes each field on its own, so one field's text is the same alone or within a record.
const csvQuoted = boundedMemo((value) => stringify([[value]], CSV_OPTIONS), ENCODED_VALUES_LIMIT);

/** One RFC 4180 field exactly as csv-stringify writes it with CSV_OPTIONS; plain values (nearly all) pass as is. */
function csvField(text: string): string {
  return CSV_SPECIAL.test(text) ? csvQuoted(text) : text;
}

const jsonString = boundedMemo((value) => JSON.stringify(value), ENCODED_VALUES_LIMIT);

/** The result's zone entries in zone order (SPEC 2.4); the API usually sends them sorted, so that is checked first. */
function entriesByZone(values: MetricResult['values']): readonly Readonly<Record<string, unknown>>[] {
  let previous = '';
  for (const entry of values) {
    const zone = zoneOf(entry);
    if (zone < previous) {
      const keyed = values.map((candidate) => ({ entry: candidate, zone: zoneOf(candidate) }));
      return keyed.sort((a, b) => compareText(a.zone, b.zone)).map(({ entry: sorted }) => sorted);
    }
    previous = zone;
  }
  return values;
}

/**
 * One result's rows differ only by zone and value: the common columns are encoded once per result as a prefix, and
 * each row is that prefix, its zone and its value columns. Output is what csv-stringify / JSON.stringify would
 * write for the same rows (the tests hold it to that).
 */
type RowsEncoder = (result: MetricResult) => string;

function csvRowsEncoder(metric: MetricDescriptor): RowsEncoder {
  const { columns, valueKey } = metric;
  return (result) => {
    const prefix = `${csvField(result.store_code)},${csvField(result.date)},${localDay(result.date)},${result.granularity},`;
    let text = '';
    for (const entry of entriesByZone(result.values)) {
      const raw = entry[valueKey];
      text += prefix + csvField(zoneOf(entry));
      for (const column of columns) text += `,${column.csv(raw)}`;
      text += '\n';
    }
    return text;
  };
}

/** NDJSON rows: `metric` first, then the columns in order, with their NDJSON types. */
function ndjsonRowsEncoder(metric: MetricDescriptor): RowsEncoder {
  const { columns, valueKey } = metric;
  const keys = columns.map((column) => `,${JSON.stringify(column.name)}:`);
  const head = `{"metric":${JSON.stringify(metric.name)},"store_code":`;
  return (result) => {
    const prefix =
      `${head}${jsonString(result.store_code)},"date":${jsonString(result.date)},"day":"${localDay(result.date)}",` +
      `"granularity":${JSON.stringify(result.granularity)},"zone":`;
    let text = '';
    for (const entry of entriesByZone(result.values)) {
      const raw = entry[valueKey];
      text += prefix + jsonString(zoneOf(entry));
      for (let index = 0; index < columns.length; index++) text += keys[index]! + columns[index]!.json(raw);
      text += '}\n';
    }
    return text;
  };
}

/**
 * The text of one validated result, as it will be written: its rows (sorted by zone) as CSV or NDJSON lines, or for
 * `--shape results` the record as received, as one NDJSON line with `metric` first. A unit is the concatenation of
 * its results' texts in (store_code, date) order.
 */
export type ResultEncoder = (metric: MetricDescriptor, result: MetricResult, record: unknown) => string;

export function resultEncoder(encoding: OutputEncoding): ResultEncoder {
  if (encoding.shape === 'results') {
    return (metric, _result, record) => `${JSON.stringify({ metric: metric.name, ...(record as object) })}\n`;
  }
  const encoders = new Map<string, RowsEncoder>();
  return (metric, result) => {
    let encode = encoders.get(metric.name);
    if (encode === undefined) {
      encode = encoding.format === 'csv' ? csvRowsEncoder(metric) : ndjsonRowsEncoder(metric);
      encoders.set(metric.name, encode);
    }
    return encode(result);
  };
}

/** The CSV header row, for the `rows` shape in CSV; nothing otherwise. */
export function headerOf(metric: MetricDescriptor, encoding: OutputEncoding): string | undefined {
  return encoding.shape === 'rows' && encoding.format === 'csv' ? csvHeader(metric) : undefined;
}
