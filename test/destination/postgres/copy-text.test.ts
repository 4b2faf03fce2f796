import { describe, expect, it } from 'vitest';
import { copyChunks, unitDigest } from '../../../src/destination/postgres/copy-text.js';
import { METRICS } from '../../../src/metrics/descriptors.js';
import { parquetTableOf, resultEncoder } from '../../../src/metrics/encode.js';

const traffic = METRICS.traffic;
const table = parquetTableOf(traffic, { format: 'parquet', shape: 'rows' }, { gte: 'a', lte: 'b' })!;
const encode = resultEncoder(traffic, { format: 'parquet', shape: 'rows' });
const piece = (storeCode: string, zones: Record<string, string>) =>
  Buffer.from(
    encode({
      store_code: storeCode,
      date: '2026-11-20T00:00:00+02:00',
      granularity: 'daily',
      values: Object.entries(zones).map(([zone, value]) => ({ zone, traffic_pct: value })),
    })!,
  );
const content = (pieces: Buffer[]) => ({ unit: { metric: traffic, day: '2026-11-20' }, header: undefined, pieces, table, rejected: [] });

describe("a unit's COPY text", () => {
  it("is one tab-separated line per row, a field's tab, newline and backslash escaped", () => {
    const text = Buffer.concat([...copyChunks(table, [piece('S1', { 'a\tb': '0.50000', 'c\\d\ne': '0.5' })])]).toString();
    expect(text).toBe(
      'S1\t2026-11-20T00:00:00+02:00\t2026-11-20\tdaily\ta\\tb\t0.50000\n' +
        'S1\t2026-11-20T00:00:00+02:00\t2026-11-20\tdaily\tc\\\\d\\ne\t0.5\n',
    );
  });

  it('has a digest that changes with any value and counts the rows', () => {
    const first = unitDigest(content([piece('S1', { A: '0.40000', B: '0.60000' })]), table, []);
    expect(first.rows).toBe(2);
    expect(unitDigest(content([piece('S1', { A: '0.40000', B: '0.60000' })]), table, [])).toEqual(first);
    expect(unitDigest(content([piece('S1', { A: '0.40001', B: '0.59999' })]), table, []).sha256).not.toBe(first.sha256);
    expect(unitDigest(content([piece('S1', { A: '0.40000', B: '0.60000' })]), table, ['{"set":"aside"}\n']).sha256).not.toBe(first.sha256);
  });
});
