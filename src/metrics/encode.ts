import { boundedMemo } from '../memo.js';
import { csvField, csvLine, jsonOrUndefined, jsonString, type OutputEncoding } from '../output/format.js';
import type { ParquetTable } from '../output/parquet.js';
import { VERSION } from '../version.js';
import { ByteWriter } from './byte-writer.js';
import { COMMON_COLUMNS, columnNames, typedColumns, type MetricDescriptor, type MetricResult } from './descriptors.js';
import { entriesByZone, zoneOf } from './schema.js';

/**
 * The text of one valid result, as it will be written: its rows (sorted by zone) as CSV or NDJSON lines, or for
 * `--shape results` the record as received, as one NDJSON line with `metric` first. A unit is the concatenation of
 * its results' texts in (store_code, date) order; undefined when the record cannot be written (nested too deeply).
 */
export type ResultEncoder = ((result: MetricResult) => string | undefined) & {
  /** Where an encoder can, it writes the same text as UTF-8 straight into the page's output. */
  readonly writeTo?: (result: MetricResult, out: ByteWriter) => void;
};

/** The CSV header row for the `rows` shape in CSV; nothing otherwise. */
export function headerOf(metric: MetricDescriptor, encoding: OutputEncoding): string | undefined {
  return encoding.shape === 'rows' && encoding.format === 'csv' ? csvLine(columnNames(metric)) : undefined;
}

export function resultEncoder(metric: MetricDescriptor, encoding: OutputEncoding): ResultEncoder {
  if (encoding.shape === 'results') return (record) => recordLine(metric, record);
  if (encoding.format === 'parquet') return parquetRowsEncoder(metric);
  return encoding.format === 'csv' ? csvRowsEncoder(metric) : ndjsonRowsEncoder(metric);
}

/**
 * For `-f parquet`: the typed columns (the CSV's names and order) and the file's metadata (what wrote it, the metric,
 * the window the unit requested); undefined for the other formats.
 */
export function parquetTableOf(
  metric: MetricDescriptor,
  encoding: OutputEncoding,
  requested: { readonly gte: string; readonly lte: string },
): ParquetTable | undefined {
  if (encoding.shape !== 'rows' || encoding.format !== 'parquet') return undefined;
  return {
    columns: typedColumns(metric),
    // store_code, date, day and granularity are shared by a result's rows; zone and the values are each row's own.
    sharedColumns: COMMON_COLUMNS.indexOf('zone'),
    metadata: [
      { key: 'area_metrics.version', value: VERSION },
      { key: 'area_metrics.metric', value: metric.name },
      { key: 'area_metrics.datetime_gte', value: requested.gte },
      { key: 'area_metrics.datetime_lte', value: requested.lte },
    ],
    createdBy: `area-metrics version ${VERSION}`,
  };
}

function recordLine(metric: MetricDescriptor, record: MetricResult): string | undefined {
  const json = jsonOrUndefined({ metric: metric.name, ...record });
  return json === undefined ? undefined : `${json}\n`;
}

/** The calendar date of a valid `date` in its own offset (no conversion to UTC): its first ten characters. */
function localDay(date: string): string {
  return date.slice(0, 10);
}

/** Store codes and zone names recur on every result of a unit: each distinct one is quoted and encoded once. */
const CSV_FIELD_BYTES_LIMIT = 65_536;
const csvFieldBytes = boundedMemo((text) => Buffer.from(csvField(text)), CSV_FIELD_BYTES_LIMIT);
const COMMA = 0x2c;
const LINE_FEED = 0x0a;

/**
 * One result's rows differ only by zone and value: the common columns are written once per result, each further row
 * copies them, then its zone and its value columns. Written as bytes straight into the page's output (a string per
 * row cost a third of the import's encoding, and the collector's time on top). Output is what csv-stringify would
 * write for the same rows (the tests hold it to that).
 */
function csvRowsEncoder(metric: MetricDescriptor): ResultEncoder {
  const { columns, valueKey } = metric;
  const writeTo = (result: MetricResult, out: ByteWriter): void => {
    const entries = entriesByZone(result.values);
    if (entries.length === 0) return;
    const start = out.length;
    out.bytes(csvFieldBytes(result.store_code));
    // A valid date holds only digits, '-', 'T', ':', '.', '+' and 'Z', and granularity is "daily": ASCII that CSV
    // never quotes; so are the value columns' texts (digits, '.' and ':').
    out.ascii(`,${result.date},${localDay(result.date)},${result.granularity},`);
    const prefixEnd = out.length;
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index] as (typeof entries)[number];
      if (index > 0) out.repeat(start, prefixEnd);
      out.bytes(csvFieldBytes(zoneOf(entry)));
      const raw = entry[valueKey];
      for (const column of columns) {
        out.byte(COMMA);
        out.ascii(column.csv(raw));
      }
      out.byte(LINE_FEED);
    }
  };
  const encode = (result: MetricResult): string => {
    const out = new ByteWriter(Buffer.allocUnsafe(1024));
    writeTo(result, out);
    return Buffer.from(out.take()).toString('utf8');
  };
  return Object.assign(encode, { writeTo });
}

/**
 * Parquet rows, held until the unit is written as one JSON line per result: its shared fields, then each row's zone
 * and value fields, every field the CSV's text (the Parquet writer types them exactly from that text).
 */
function parquetRowsEncoder(metric: MetricDescriptor): ResultEncoder {
  const { columns, valueKey } = metric;
  return (result) => {
    let text = `[${jsonString(result.store_code)},${jsonString(result.date)},"${localDay(result.date)}",${JSON.stringify(result.granularity)},[`;
    let separator = '[';
    for (const entry of entriesByZone(result.values)) {
      const raw = entry[valueKey];
      text += separator + jsonString(zoneOf(entry));
      // Value texts are digits, `.` and `:` only: nothing to escape.
      for (const column of columns) text += `,"${column.csv(raw)}"`;
      text += ']';
      separator = ',[';
    }
    return `${text}]]\n`;
  };
}

/** NDJSON rows: `metric` first, then the columns in order, with their NDJSON types. */
function ndjsonRowsEncoder(metric: MetricDescriptor): ResultEncoder {
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
