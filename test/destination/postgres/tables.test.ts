import { describe, expect, it } from 'vitest';
import { columnDifferences, quoteName, sqlTypeOf, tableNameOf } from '../../../src/destination/postgres/tables.js';
import { METRICS, typedColumns } from '../../../src/metrics/descriptors.js';

const traffic = METRICS.traffic;

describe("a metric's table", () => {
  it("has the Parquet file's columns as SQL types, the table named by the metric", () => {
    expect(typedColumns(traffic).map((column) => `${column.name} ${sqlTypeOf(column.type)}`)).toEqual([
      'store_code text',
      'date timestamp with time zone',
      'day date',
      'granularity text',
      'zone text',
      'traffic_pct numeric(6,5)',
    ]);
    expect(sqlTypeOf('int64')).toBe('bigint');
    expect(sqlTypeOf('int32')).toBe('integer');
    expect([tableNameOf('avg-screen-time'), quoteName('we"ird')]).toEqual(['avg_screen_time', '"we""ird"']);
  });

  it('differs from one that lacks, retypes or adds a column, in words naming each', () => {
    const columns = typedColumns(traffic);
    const same = new Map(columns.map((column) => [column.name, sqlTypeOf(column.type)]));
    expect(columnDifferences(columns, same)).toEqual([]);
    const other = new Map([...same, ['traffic_pct', 'double precision'], ['note', 'text']]);
    other.delete('zone');
    expect(columnDifferences(columns, other)).toEqual([
      'zone missing',
      'traffic_pct is double precision, not numeric(6,5)',
      "note is not the tool's",
    ]);
  });
});
