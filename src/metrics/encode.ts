import { csvField, csvLine, jsonOrUndefined, jsonString, type OutputEncoding } from '../output/format.js';
import { columnNames, type MetricDescriptor, type MetricResult } from './descriptors.js';
import { entriesByZone, zoneOf } from './schema.js';

/**
 * The text of one valid result, as it will be written: its rows (sorted by zone) as CSV or NDJSON lines, or for
 * `--shape results` the record as received, as one NDJSON line with `metric` first. A unit is the concatenation of
 * its results' texts in (store_code, date) order; undefined when the record cannot be written (nested too deeply).
 */
export type ResultEncoder = (result: MetricResult) => string | undefined;

/** The CSV header row for the `rows` shape in CSV; nothing otherwise. */
export function headerOf(metric: MetricDescriptor, encoding: OutputEncoding): string | undefined {
  return encoding.shape === 'rows' && encoding.format === 'csv' ? csvLine(columnNames(metric)) : undefined;
}

export function resultEncoder(metric: MetricDescriptor, encoding: OutputEncoding): ResultEncoder {
  if (encoding.shape === 'results') return (record) => recordLine(metric, record);
  return encoding.format === 'csv' ? csvRowsEncoder(metric) : ndjsonRowsEncoder(metric);
}

function recordLine(metric: MetricDescriptor, record: MetricResult): string | undefined {
  const json = jsonOrUndefined({ metric: metric.name, ...record });
  return json === undefined ? undefined : `${json}\n`;
}

/** The calendar date of a valid `date` in its own offset (no conversion to UTC): its first ten characters. */
function localDay(date: string): string {
  return date.slice(0, 10);
}

/**
 * One result's rows differ only by zone and value: the common columns are encoded once per result as a prefix, and
 * each row is that prefix, its zone and its value columns. Output is what csv-stringify / JSON.stringify would
 * write for the same rows (the tests hold it to that).
 */
function csvRowsEncoder(metric: MetricDescriptor): ResultEncoder {
  const { columns, valueKey } = metric;
  return (result) => {
    // A valid date holds only digits, '-', 'T', ':', '.', '+' and 'Z': never a character CSV quotes.
    const prefix = `${csvField(result.store_code)},${result.date},${localDay(result.date)},${result.granularity},`;
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
