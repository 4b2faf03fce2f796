import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { daysFromCivil } from '../window/civil-day.js';
import { ContractError } from '../errors.js';

/**
 * Parquet files from the rows a unit holds as text. A unit's pieces are lines of JSON, one per group of rows that
 * share their leading fields: `[shared..., [[own...], ...]]`, every field the same text the CSV writes. Each column
 * declares its Parquet type, and its text is turned into that type exactly (integers and decimals from their digits,
 * never through a float). Rows go out in row groups of at most `ROW_GROUP_ROWS`, each encoded and handed on as soon
 * as it is full, so a file of any size costs one row group's memory on top of the unit's text.
 */

/** A column's Parquet type: a UTF-8 string, an instant (UTC-adjusted microseconds), a calendar date, integers, a decimal. */
export type ParquetColumnType = 'string' | 'timestamp' | 'date' | 'int32' | 'int64' | `decimal(${number},${number})`;

export interface ParquetColumn {
  readonly name: string;
  readonly type: ParquetColumnType;
}

export interface ParquetTable {
  /** Every column, in file order: the shared leading fields of a line's group, then each row's own. */
  readonly columns: readonly ParquetColumn[];
  /** Fields shared by a line's rows (the first `sharedColumns` columns). */
  readonly sharedColumns: number;
  /** The file's key-value metadata, in this order; nothing that changes between runs over the same data. */
  readonly metadata: readonly { readonly key: string; readonly value: string }[];
  /** The footer's `created_by`: the writing tool and its version. */
  readonly createdBy: string;
}

/** Rows per row group: large enough for engines to read efficiently, small enough to bound a big day's memory. */
export const ROW_GROUP_ROWS = 65_536;

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];
type ColumnValues = Parameters<ParquetWriter['write']>[0]['columnData'][number]['data'];

const DECIMAL = /^decimal\((\d+),(\d+)\)$/;

function decimalShape(type: ParquetColumnType): { precision: number; scale: number } | undefined {
  const match = DECIMAL.exec(type);
  return match === null ? undefined : { precision: Number(match[1]), scale: Number(match[2]) };
}

/** The Parquet schema element of a column: required (never null), with its logical type and the legacy converted one. */
function schemaElement(column: ParquetColumn): SchemaElement {
  const base = { name: column.name, repetition_type: 'REQUIRED' } as const;
  switch (column.type) {
    case 'string':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } };
    case 'timestamp':
      return {
        ...base,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      };
    case 'date':
      return { ...base, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } };
    case 'int32':
      return { ...base, type: 'INT32' };
    case 'int64':
      return { ...base, type: 'INT64' };
  }
  const decimal = decimalShape(column.type);
  // An INT32 holds any unscaled value of up to 9 digits; the decimals written here are far smaller.
  if (decimal === undefined || decimal.precision > 9) throw new Error(`unsupported Parquet column type ${column.type}`);
  return { ...base, type: 'INT32', converted_type: 'DECIMAL', ...decimal, logical_type: { type: 'DECIMAL', ...decimal } };
}

const MICROS_PER_DAY = 86_400_000_000n;

const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT_TEXT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;
const INTEGER_TEXT = /^-?\d+$/;
const DECIMAL_TEXT = /^(-?)(\d+)(?:\.(\d+))?$/;

function unfit(column: ParquetColumn, text: string, why: string): ContractError {
  return new ContractError(`${column.name} ${JSON.stringify(text)} ${why}, so it cannot be written to Parquet as ${column.type}`);
}

/** The column's text as the value hyparquet-writer takes for its type, exactly. */
type Converter = (text: string) => string | number | bigint;

function converterOf(column: ParquetColumn): Converter {
  switch (column.type) {
    case 'string': {
      // The first copy of each distinct text in a row group is the one kept: the parsed rows' own copies then die
      // young instead of living in the row group until it is written (a big day's peak memory).
      const kept = new Map<string, string>();
      return (text) => {
        const first = kept.get(text);
        if (first !== undefined) return first;
        if (kept.size >= ROW_GROUP_ROWS) kept.clear();
        kept.set(text, text);
        return text;
      };
    }
    case 'date':
      return (text) => {
        const match = DATE_TEXT.exec(text);
        if (match === null) throw unfit(column, text, 'is not YYYY-MM-DD');
        return daysFromCivil(Number(match[1]), Number(match[2]), Number(match[3]));
      };
    case 'timestamp':
      // Microseconds since the epoch of the instant, whatever offset it was written in; digits below a microsecond
      // are dropped (the API sends whole seconds).
      return (text) => {
        const match = INSTANT_TEXT.exec(text);
        if (match === null) throw unfit(column, text, 'is not an ISO 8601 date-time with an offset');
        const [, y, mo, d, h, mi, s, fraction, sign, oh, om] = match;
        const days = daysFromCivil(Number(y), Number(mo), Number(d));
        const seconds = Number(h) * 3600 + Number(mi) * 60 + Number(s);
        const offsetSeconds = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60);
        const micros = BigInt((fraction ?? '').padEnd(6, '0').slice(0, 6));
        return BigInt(days) * MICROS_PER_DAY + BigInt(seconds - offsetSeconds) * 1_000_000n + micros;
      };
    case 'int32':
      return (text) => {
        const value = Number(text);
        if (!INTEGER_TEXT.test(text) || value < -(2 ** 31) || value >= 2 ** 31) throw unfit(column, text, 'is not a 32-bit integer');
        return value;
      };
    case 'int64':
      return (text) => {
        if (!INTEGER_TEXT.test(text)) throw unfit(column, text, 'is not an integer');
        const value = BigInt(text);
        if (value < -(2n ** 63n) || value >= 2n ** 63n) throw unfit(column, text, 'is not a 64-bit integer');
        return value;
      };
  }
  const { precision, scale } = decimalShape(column.type) ?? { precision: 0, scale: 0 };
  const limit = 10n ** BigInt(precision);
  // The unscaled integer from the text's digits: "0.10000" at scale 5 is 10000. More decimals than the scale are
  // taken only when they are zeros, so every value is exactly the one sent.
  return (text) => {
    const match = DECIMAL_TEXT.exec(text);
    if (match === null) throw unfit(column, text, 'is not a decimal number');
    const [, sign, whole, fraction = ''] = match;
    if (fraction.length > scale && !/^0*$/.test(fraction.slice(scale))) throw unfit(column, text, `has more than ${scale} decimal places`);
    const unscaled = BigInt(`${sign}${whole}${fraction.slice(0, scale).padEnd(scale, '0')}`);
    if (unscaled <= -limit || unscaled >= limit) throw unfit(column, text, `has more than ${precision} digits`);
    return unscaled;
  };
}

/** One row group's values of a column, in the form its converter makes them. */
type ColumnBuffer = { [row: number]: string | number | bigint; slice(start: number, end: number): ColumnValues };

function columnBuffer(column: ParquetColumn): ColumnBuffer {
  switch (column.type) {
    case 'string':
      return new Array<string>(ROW_GROUP_ROWS);
    case 'date':
    case 'int32':
      return new Int32Array(ROW_GROUP_ROWS);
    default:
      // int64, timestamps, and decimals as their unscaled integers
      return new BigInt64Array(ROW_GROUP_ROWS);
  }
}

/** A ByteWriter whose written bytes can be taken out as they are made, keeping its file offsets. */
class DrainingWriter extends ByteWriter {
  drain(): Uint8Array {
    const bytes = this.getBytes().slice();
    this.index = 0;
    return bytes;
  }
}

/** A line's text. The lines are UTF-8 this program wrote from strings, so Buffer's fast decoder is enough. */
function lineText(line: Uint8Array): string {
  return Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('utf8');
}

/**
 * The Parquet file of the rows in `lines` (see the top of this file), as byte chunks: the head and each row group
 * as it fills, then the footer. Snappy-compressed, with min/max statistics; the same rows give the same bytes.
 */
export function* parquetFileChunks(table: ParquetTable, lines: Iterable<Uint8Array>): Generator<Uint8Array> {
  const { columns, sharedColumns } = table;
  const converters = columns.map(converterOf);
  const writer = new DrainingWriter(1 << 20);
  const parquet = new ParquetWriter({
    writer,
    schema: [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)],
    codec: 'SNAPPY',
    kvMetadata: table.metadata.map(({ key, value }) => ({ key, value })),
    createdBy: table.createdBy,
  });
  // Numbers go in typed arrays: a row group of boxed values costs several times the memory.
  const buffers = columns.map(columnBuffer);
  let rows = 0;
  const writeGroup = (): Uint8Array => {
    void parquet.write({
      columnData: columns.map((column, index) => ({
        name: column.name,
        data: buffers[index]!.slice(0, rows),
        // Strings always through a dictionary: the writer's plain encoding makes a byte array per value, which cost
        // hundreds of MB on a big day, and its sampling takes a sorted column's repeats (store_code) for distinct.
        ...(column.type === 'string' ? { encoding: 'RLE_DICTIONARY' as const } : {}),
      })),
      rowGroupSize: rows,
    });
    rows = 0;
    return writer.drain();
  };
  for (const line of lines) {
    const fields = JSON.parse(lineText(line)) as unknown[];
    const own = fields[sharedColumns] as string[][];
    const shared = converters.slice(0, sharedColumns).map((convert, index) => convert(fields[index] as string));
    for (const row of own) {
      for (let index = 0; index < sharedColumns; index++) buffers[index]![rows] = shared[index]!;
      for (let index = sharedColumns; index < columns.length; index++)
        buffers[index]![rows] = converters[index]!(row[index - sharedColumns]!);
      if (++rows === ROW_GROUP_ROWS) yield writeGroup();
    }
  }
  if (rows > 0) yield writeGroup();
  void parquet.finish();
  yield writer.drain();
}
