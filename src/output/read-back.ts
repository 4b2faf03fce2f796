import { eachWrittenCsvResult } from './csv-bytes.js';
import type { StoredResult } from './stored-result.js';
import type { OutputFormat } from './format.js';

export type { StoredResult };

/** A unit file's rows as a table: its columns, and each row's fields in their order. */
export interface FileRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * The results of a unit file this tool wrote (`rows` shape in CSV, NDJSON or Parquet; `results` shape NDJSON), in
 * the file's order: rows of one store and instant (consecutive, as the file sorts them) make one result.
 */
export async function storedResults(bytes: Uint8Array, format: OutputFormat): Promise<StoredResult[]> {
  if (format === 'ndjson') {
    const text = utf8Of(bytes);
    return /^\{[^\n]*"values":\[/.test(text) ? resultLines(text) : resultsOf(ndjsonRows(text));
  }
  return resultsOf(format === 'csv' ? csvRows(utf8Of(bytes)) : await parquetRows(bytes));
}

/** The bytes as UTF-8 text, decoded where they are (a day's file once, not copied first). */
function utf8Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * Each result of a unit file in turn, as `storedResults` gives them, none kept: a reader that adds them up as they
 * come (a backtest, a day's file each night) never holds a day's rows as objects. `visitor` gives the function that
 * takes them; it is asked again if the file has to be read again another way (a CSV field spanning lines, met half-way),
 * and only the last one's results are the file's. `zones: false`: the entries without their zone, for a reader that
 * only adds the values up (a CSV's zone names are then not even cut out of their lines).
 */
export async function eachStoredResult(
  bytes: Uint8Array,
  format: OutputFormat,
  visitor: () => (result: StoredResult) => void,
  { zones = true }: { readonly zones?: boolean } = {},
): Promise<void> {
  if (format === 'csv') {
    // Without zones, the bytes are scanned once and the code, date and values cut from them as Latin-1 (a copy, where
    // decoding UTF-8 costs a day's file 15 ms when a zone name is not ASCII, and makes every string cut from it two
    // bytes a character). Only a zone may hold other than ASCII then: a file that is not so is read as UTF-8 text.
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (!zones) {
      const text = buffer.toString('latin1');
      const written = writtenColumns(text);
      if (written !== undefined && eachWrittenCsvResult(buffer, text, written.from, written.names, visitor())) return;
    }
    if (csvEachResult(buffer.toString('utf8'), visitor(), zones)) return;
  }
  const visit = visitor();
  for (const result of await storedResults(bytes, format)) visit(result);
}

/** CSV a line at a time into results (grouped as `resultsOf` groups rows); false when a line is not one by itself. */
function csvEachResult(text: string, visit: (result: StoredResult) => void, zones: boolean): boolean {
  let place: ReturnType<typeof placesOf> | undefined;
  /** The writer's own columns, the values last: a line's fields are cut where they are, not split into an array. */
  let writers = false;
  let last: StoredResult | undefined;
  let lastDate: string | undefined;
  const cuts = new Int32Array(CUTS);
  cuts[NEXT_QUOTE] = text.indexOf('"');
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const lineStart = start;
    const lineEnd = end > start && text.charCodeAt(end - 1) === CR ? end - 1 : end;
    start = end + 1;
    if (lineEnd === lineStart) continue;
    if (writers && place !== undefined && cutLine(text, lineStart, lineEnd, cuts)) {
      const codeEnd = cuts[CODE_END]!;
      const dateEnd = cuts[DATE_END]!;
      const sameStore = last !== undefined && last.store_code.length === codeEnd - lineStart && text.startsWith(last.store_code, lineStart);
      if (!sameStore || lastDate === undefined || lastDate.length !== dateEnd - codeEnd - 1 || !text.startsWith(lastDate, codeEnd + 1)) {
        if (last !== undefined) visit(last);
        lastDate = text.slice(codeEnd + 1, dateEnd);
        last = { store_code: text.slice(lineStart, codeEnd), date: lastDate, granularity: 'daily', values: [] };
      }
      const entry: Record<string, unknown> = zones ? { zone: zoneText(text, cuts[ZONE_START]!, cuts[ZONE_END]!) } : {};
      let at = cuts[ZONE_END]! + 1;
      for (const [name] of place.values) {
        if (at > lineEnd) {
          entry[name] = undefined;
          continue;
        }
        let comma = text.indexOf(',', at);
        if (comma === -1 || comma > lineEnd) comma = lineEnd;
        entry[name] = text.slice(at, comma);
        at = comma + 1;
      }
      last!.values.push(entry);
      continue;
    }
    const line = text.slice(lineStart, lineEnd);
    const quote = line.indexOf('"');
    const fields = quote === -1 ? line.split(',') : quotedLine(line, quote);
    if (fields === undefined) return false;
    if (place === undefined) {
      place = placesOf(fields);
      writers =
        COMMON.every((name, index) => fields[index] === name) && place.values.every(([, index], order) => index === COMMON.length + order);
      continue;
    }
    const code = String(fields[place.store]);
    if (last === undefined || last.store_code !== code || lastDate !== fields[place.date]) {
      if (last !== undefined) visit(last);
      lastDate = fields[place.date];
      last = { store_code: code, date: String(lastDate), granularity: 'daily', values: [] };
    }
    const entry: Record<string, unknown> = zones ? { zone: fields[place.zone] } : {};
    for (const [name, index] of place.values) entry[name] = fields[index];
    last.values.push(entry);
  }
  if (last !== undefined) visit(last);
  return true;
}

const COMMON = ['store_code', 'date', 'day', 'granularity', 'zone'] as const;

/**
 * The value columns of a CSV whose header (its first line) is the writer's own columns in ASCII, and where the
 * lines after it start; undefined for any other.
 */
function writtenColumns(text: string): { readonly names: readonly string[]; readonly from: number } | undefined {
  let start = 0;
  for (;;) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const lineEnd = end > start && text.charCodeAt(end - 1) === CR ? end - 1 : end;
    if (lineEnd === start && end < text.length) {
      start = end + 1;
      continue;
    }
    const header = text.slice(start, lineEnd);
    if (!/^[\x20-\x7e]*$/.test(header) || header.includes('"')) return undefined;
    const fields = header.split(',');
    const { values } = placesOf(fields);
    const writers =
      COMMON.every((name, index) => fields[index] === name) && values.every(([, index], order) => index === COMMON.length + order);
    return writers ? { names: values.map(([name]) => name), from: end + 1 } : undefined;
  }
}

/** Where `cutLine` leaves a line's fields, and the next quote of the text (-1: none), in one reused array. */
const [CODE_END, DATE_END, ZONE_START, ZONE_END, NEXT_QUOTE, CUTS] = [0, 1, 2, 3, 4, 5] as const;

/**
 * Cuts a line of the writer's columns: the ends of its code and date, where its zone is (quoted or not) and where
 * its values begin; false for a line it cannot cut so (a quote outside the zone, fewer fields), read by fields.
 */
function cutLine(text: string, start: number, end: number, cuts: Int32Array): boolean {
  let quote = cuts[NEXT_QUOTE]!;
  if (quote !== -1 && quote < start) quote = cuts[NEXT_QUOTE] = text.indexOf('"', start);
  const codeEnd = text.indexOf(',', start);
  const dateEnd = codeEnd === -1 ? -1 : text.indexOf(',', codeEnd + 1);
  const dayEnd = dateEnd === -1 ? -1 : text.indexOf(',', dateEnd + 1);
  const granularityEnd = dayEnd === -1 ? -1 : text.indexOf(',', dayEnd + 1);
  if (granularityEnd === -1 || granularityEnd >= end || (quote !== -1 && quote < granularityEnd)) return false;
  const zoneStart = granularityEnd + 1;
  let zoneEnd: number;
  if (text.charCodeAt(zoneStart) === QUOTE) {
    let closing = text.indexOf('"', zoneStart + 1);
    while (closing !== -1 && text.charCodeAt(closing + 1) === QUOTE) closing = text.indexOf('"', closing + 2);
    if (closing === -1 || closing >= end) return false;
    zoneEnd = closing + 1;
    quote = cuts[NEXT_QUOTE] = text.indexOf('"', zoneEnd);
  } else {
    zoneEnd = text.indexOf(',', zoneStart);
    if (zoneEnd === -1 || zoneEnd > end) zoneEnd = end;
  }
  if (zoneEnd < end && text.charCodeAt(zoneEnd) !== COMMA) return false;
  if (quote !== -1 && quote < end) return false;
  cuts[CODE_END] = codeEnd;
  cuts[DATE_END] = dateEnd;
  cuts[ZONE_START] = zoneStart;
  cuts[ZONE_END] = zoneEnd;
  return true;
}

/** A zone field's text: unquoted as it is, quoted without its quotes and with `""` as one quote. */
function zoneText(text: string, start: number, end: number): string {
  return text.charCodeAt(start) === QUOTE ? text.slice(start + 1, end - 1).replaceAll('""', '"') : text.slice(start, end);
}

/** Where a unit file's columns are: the common ones, and the zone's values (the columns after the common five). */
function placesOf(columns: readonly string[]) {
  return {
    store: columns.indexOf('store_code'),
    date: columns.indexOf('date'),
    zone: columns.indexOf('zone'),
    values: columns.flatMap((name, index) =>
      ['store_code', 'date', 'day', 'granularity', 'zone'].includes(name) ? [] : [[name, index] as const],
    ),
  };
}

/** Rows grouped into results: the columns after the common five are the zone's values. */
export function resultsOf({ columns, rows }: FileRows): StoredResult[] {
  const { store, date, zone, values: valueColumns } = placesOf(columns);
  const results: StoredResult[] = [];
  let last: StoredResult | undefined;
  let lastDate: unknown;
  for (const row of rows) {
    const code = String(row[store]);
    if (last === undefined || last.store_code !== code || !sameInstant(lastDate, row[date])) {
      lastDate = row[date];
      last = { store_code: code, date: String(row[date]), granularity: 'daily', values: [] };
      results.push(last);
    }
    const entry: Record<string, unknown> = { zone: row[zone] };
    for (const [name, index] of valueColumns) entry[name] = row[index];
    last.values.push(entry);
  }
  return results;
}

function sameInstant(a: unknown, b: unknown): boolean {
  return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
}

function resultLines(text: string): StoredResult[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const { metric: _metric, ...result } = JSON.parse(line) as StoredResult & { metric?: string };
      return result;
    });
}

async function parquetRows(bytes: Uint8Array): Promise<FileRows> {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  // Loaded by the first Parquet file read: every command that opens a destination reaches this module.
  const { parquetReadObjects } = await import('hyparquet');
  const objects: Record<string, unknown>[] = await parquetReadObjects({ file: buffer });
  const columns = objects.length === 0 ? [] : Object.keys(objects[0]!);
  // INT64 comes back as a BigInt: a count as the API sent it is a safe integer, and the totals add numbers.
  const plain = (value: unknown): unknown => (typeof value === 'bigint' ? Number(value) : value);
  return { columns, rows: objects.map((object) => columns.map((column): unknown => plain(object[column]))) };
}

function ndjsonRows(text: string): FileRows {
  const rows: unknown[][] = [];
  let columns: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const record = JSON.parse(line) as Record<string, unknown>;
    if (rows.length === 0) columns = Object.keys(record).filter((key) => key !== 'metric');
    rows.push(columns.map((column) => record[column]));
  }
  return { columns, rows };
}

/** CSV fields, quoted where a field holds a comma, a quote or a line break (`""` inside quotes is one quote). */
function csvRows(text: string): FileRows {
  // No quote anywhere (the usual file: codes and zone names without commas or quotes): every comma splits a field.
  if (!text.includes('"')) {
    const [columns = [], ...rows] = text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line).split(','));
    return { columns, rows };
  }
  // Quotes only within lines (a zone named "Café ""Central"", Ground floor"): a line without one is split on its
  // commas, the others parsed field by field; a field that spans lines is read by the parser below.
  const lines = quotedLines(text);
  if (lines !== undefined) {
    const [columns = [], ...rows] = lines;
    return { columns, rows };
  }
  const records: string[][] = [];
  let record: string[] = [];
  let at = 0;
  while (at < text.length) {
    let field: string;
    if (text[at] === '"') {
      let end = at + 1;
      let value = '';
      for (;;) {
        const quote = text.indexOf('"', end);
        if (quote === -1) throw new Error('a CSV field whose quote never closes');
        value += text.slice(end, quote);
        if (text[quote + 1] === '"') {
          value += '"';
          end = quote + 2;
        } else {
          end = quote + 1;
          break;
        }
      }
      field = value;
      at = end;
    } else {
      let end = at;
      while (end < text.length && text[end] !== ',' && text[end] !== '\n' && text[end] !== '\r') end++;
      field = text.slice(at, end);
      at = end;
    }
    record.push(field);
    if (text[at] === ',') at++;
    else {
      if (text[at] === '\r') at++;
      if (text[at] === '\n') at++;
      records.push(record);
      record = [];
    }
  }
  const [columns = [], ...rows] = records;
  return { columns, rows };
}

/** Each line's fields, a line at a time; undefined when a quoted field holds a line break (an odd count of quotes). */
function quotedLines(text: string): string[][] | undefined {
  const records: string[][] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end > start && text.charCodeAt(end - 1) === CR ? end - 1 : end);
    start = end + 1;
    if (line === '') continue;
    const quote = line.indexOf('"');
    if (quote === -1) {
      records.push(line.split(','));
      continue;
    }
    const fields = quotedLine(line, quote);
    if (fields === undefined) return undefined;
    records.push(fields);
  }
  return records;
}

const CR = 13;
const QUOTE = 34;
const COMMA = 44;

/** The fields of a line with a quote at `firstQuote`; undefined when a quoted field does not end on it. */
function quotedLine(line: string, firstQuote: number): string[] | undefined {
  const lastComma = line.lastIndexOf(',', firstQuote);
  const fields = lastComma === -1 ? [] : line.slice(0, lastComma).split(',');
  let at = lastComma + 1;
  for (;;) {
    if (line.charCodeAt(at) === QUOTE) {
      let value = '';
      let from = at + 1;
      for (;;) {
        const quote = line.indexOf('"', from);
        if (quote === -1) return undefined;
        value += line.slice(from, quote);
        if (line.charCodeAt(quote + 1) !== QUOTE) {
          at = quote + 1;
          break;
        }
        value += '"';
        from = quote + 2;
      }
      fields.push(value);
    } else {
      let end = line.indexOf(',', at);
      if (end === -1) end = line.length;
      const quote = line.indexOf('"', at);
      // A quote inside an unquoted field is kept as it is, as the parser below keeps it.
      if (quote !== -1 && quote < end) return undefined;
      fields.push(line.slice(at, end));
      at = end;
    }
    if (at >= line.length) return fields;
    if (line.charCodeAt(at) !== COMMA) return undefined;
    at++;
  }
}
