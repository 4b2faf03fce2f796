import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractError } from '../../src/errors.js';
import { daysFromCivil } from '../../src/window/civil-day.js';
import { parquetFileChunks, ROW_GROUP_ROWS, type ParquetTable } from '../../src/output/parquet.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';

const TABLE: ParquetTable = {
  columns: [
    { name: 'store_code', type: 'string' },
    { name: 'date', type: 'timestamp' },
    { name: 'day', type: 'date' },
    { name: 'zone', type: 'string' },
    { name: 'users', type: 'int64' },
    { name: 'seconds', type: 'int32' },
    { name: 'share', type: 'decimal(6,5)' },
  ],
  sharedColumns: 3,
  metadata: [
    { key: 'tool.version', value: '9.9.9' },
    { key: 'tool.metric', value: 'test' },
  ],
  createdBy: 'area-metrics version 9.9.9',
};

/** One line per group of rows, as the unit holds them: the shared fields, then each row's own. */
function line(shared: readonly string[], own: readonly (readonly string[])[]): Uint8Array {
  return Buffer.from(`${JSON.stringify([...shared, own])}\n`);
}

function bytesOf(table: ParquetTable, lines: Iterable<Uint8Array>): Buffer {
  return Buffer.concat([...parquetFileChunks(table, lines)]);
}

let folder: string;
let duck: DuckDb;
let fileNumber = 0;

async function fileOf(bytes: Uint8Array): Promise<string> {
  const path = join(folder, `${++fileNumber}.parquet`);
  await writeFile(path, bytes);
  return sqlText(path);
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'parquet-'));
  duck = await DuckDb.open();
});
afterAll(async () => {
  duck.close();
  await rm(folder, { recursive: true, force: true });
});

describe('daysFromCivil', () => {
  it('counts days since 1970-01-01 as Date does, leap years and years below 100 included', () => {
    for (const [year, month, day] of [
      [1970, 1, 1],
      [2000, 2, 29],
      [2026, 11, 20],
      [1969, 12, 31],
      [2100, 3, 1],
      [1600, 2, 29],
    ] as const) {
      expect(daysFromCivil(year, month, day)).toBe(Date.UTC(year, month - 1, day) / 86_400_000);
    }
    const early = new Date(Date.UTC(2000, 0, 1));
    early.setUTCFullYear(50);
    expect(daysFromCivil(50, 1, 1)).toBe(early.getTime() / 86_400_000);
  });
});

describe('parquetFileChunks', () => {
  const lines = [
    line(
      ['S1', '2026-11-20T00:00:00+14:00', '2026-11-20'],
      [
        ['Café "Central", Ground floor', '9007199254740993', '35999999', '0.10000'],
        ['食品売り場', '0', '0', '1'],
      ],
    ),
    line(['S2', '2026-11-19T00:00:00.123456-11:00', '2026-11-19'], [['Wine, Beer & Spirits', '12', '61', '0.0000100']]),
  ];

  it('types each column as declared, required, with the table metadata and no write time', async () => {
    const file = await fileOf(bytesOf(TABLE, lines));
    expect(await duck.columns(file)).toEqual([
      'store_code VARCHAR',
      'date TIMESTAMP WITH TIME ZONE',
      'day DATE',
      'zone VARCHAR',
      'users BIGINT',
      'seconds INTEGER',
      'share DECIMAL(6,5)',
    ]);
    const schema = await duck.rows(`SELECT name, repetition_type, logical_type FROM parquet_schema(${file}) WHERE name <> 'root'`);
    expect(schema.map((row) => row.repetition_type)).toEqual(Array(7).fill('REQUIRED'));
    expect(schema.find((row) => row.name === 'date')?.logical_type).toMatch(/isAdjustedToUTC=1.*MICROS=MicroSeconds/);
    const metadata = await duck.rows(`SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${file})`);
    expect(metadata).toEqual(TABLE.metadata);
    const [footer] = await duck.rows(`SELECT created_by FROM parquet_file_metadata(${file})`);
    expect(footer?.created_by).toBe('area-metrics version 9.9.9');
  });

  it('keeps every value exact: instants of any offset, dates, 64-bit integers, decimals from their digits', async () => {
    const file = await fileOf(bytesOf(TABLE, lines));
    const rows = await duck.rows(
      `SELECT store_code, epoch_us(date)::VARCHAR AS micros, day::VARCHAR AS day, zone, users::VARCHAR AS users, seconds, share::VARCHAR AS share, share = 0.1 AS is_tenth FROM ${file}`,
    );
    const micros = (text: string, extra = 0n) => (BigInt(Date.parse(text)) * 1000n + extra).toString();
    expect(rows).toEqual([
      {
        store_code: 'S1',
        micros: micros('2026-11-19T10:00:00Z'),
        day: '2026-11-20',
        zone: 'Café "Central", Ground floor',
        users: '9007199254740993',
        seconds: 35999999,
        share: '0.10000',
        is_tenth: true,
      },
      {
        store_code: 'S1',
        micros: micros('2026-11-19T10:00:00Z'),
        day: '2026-11-20',
        zone: '食品売り場',
        users: '0',
        seconds: 0,
        share: '1.00000',
        is_tenth: false,
      },
      {
        store_code: 'S2',
        micros: micros('2026-11-19T11:00:00.123Z', 456n),
        day: '2026-11-19',
        zone: 'Wine, Beer & Spirits',
        users: '12',
        seconds: 61,
        share: '0.00001',
        is_tenth: false,
      },
    ]);
  });

  it('writes DECIMAL and TIMESTAMP min/max statistics a reader takes as the values they are', async () => {
    const file = await fileOf(bytesOf(TABLE, lines));
    const stats = await duck.rows(
      `SELECT path_in_schema AS name, stats_min_value AS min, stats_max_value AS max FROM parquet_metadata(${file})`,
    );
    const of = (name: string) => stats.find((row) => row.name === name);
    expect(of('share')).toEqual({ name: 'share', min: '0.00001', max: '1.00000' });
    expect(of('date')).toEqual({ name: 'date', min: '2026-11-19 10:00:00+00', max: '2026-11-19 11:00:00.123456+00' });
    expect(of('day')).toEqual({ name: 'day', min: '2026-11-19', max: '2026-11-20' });
    expect(of('users')).toEqual({ name: 'users', min: '0', max: '9007199254740993' });
  });

  it('gives the same bytes for the same rows', () => {
    expect(bytesOf(TABLE, lines).equals(bytesOf(TABLE, lines))).toBe(true);
  });

  it('hands each row group on as it fills, before reading the rows after it', async () => {
    const total = ROW_GROUP_ROWS * 2 + 10;
    let read = 0;
    function* many(): Generator<Uint8Array> {
      for (let index = 0; index < total; index++) {
        read++;
        yield line([`S${index}`, '2026-11-20T00:00:00Z', '2026-11-20'], [['Z', String(index), '1', '0.5']]);
      }
    }
    const chunks: Buffer[] = [];
    const readAtChunk: number[] = [];
    for (const chunk of parquetFileChunks(TABLE, many())) {
      chunks.push(Buffer.from(chunk));
      readAtChunk.push(read);
    }
    // The first group is out when its last row was read, not after the whole input.
    expect(readAtChunk[0]).toBe(ROW_GROUP_ROWS);
    const file = await fileOf(Buffer.concat(chunks));
    const groups = await duck.rows(
      `SELECT row_group_id, row_group_num_rows::INTEGER AS n FROM parquet_metadata(${file}) WHERE path_in_schema = 'zone'`,
    );
    expect(groups.map((group) => group.n)).toEqual([ROW_GROUP_ROWS, ROW_GROUP_ROWS, 10]);
    const [sum] = await duck.rows(`SELECT sum(users)::VARCHAR AS users, count(*)::INTEGER AS n FROM ${file}`);
    expect(sum).toEqual({ users: String((total * (total - 1)) / 2), n: total });
  });

  it.each([
    ['0.123456', /share "0\.123456" has more than 5 decimal places/],
    ['10.5', /share "10\.5" has more than 6 digits/],
    ['0,5', /share "0,5" is not a decimal number/],
  ])('refuses a decimal it cannot hold exactly: %s', (share, message) => {
    const bad = [line(['S1', '2026-11-20T00:00:00Z', '2026-11-20'], [['Z', '1', '1', share]])];
    expect(() => bytesOf(TABLE, bad)).toThrow(ContractError);
    expect(() => bytesOf(TABLE, bad)).toThrow(message);
  });

  it('refuses an integer outside its column type', () => {
    const bad = [line(['S1', '2026-11-20T00:00:00Z', '2026-11-20'], [['Z', '1', String(2 ** 31), '0']])];
    expect(() => bytesOf(TABLE, bad)).toThrow(/seconds "2147483648" is not a 32-bit integer/);
  });
});
