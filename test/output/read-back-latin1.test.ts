/**
 * A CSV read without its zones is read from its bytes as Latin-1 (a byte a character) and falls back to UTF-8 when
 * anything it hands on is not ASCII: the results are those of the whole-file reader either way, never a code, date,
 * value or column name cut out of a UTF-8 character.
 */
import { describe, expect, it } from 'vitest';
import { csvLine } from '../../src/output/format.js';
import { leanRead, wholeWithoutZones } from '../helpers/read-back.js';

const HEADER = ['store_code', 'date', 'day', 'granularity', 'zone', 'unique_users'];
const DATE = '2026-11-20T00:00:00+02:00';
const row = (code: string, zone: string, value: string): string[] => [code, DATE, '2026-11-20', 'daily', zone, value];

const csv = (rows: readonly (readonly string[])[]): string => rows.map((fields) => csvLine(fields)).join('');

describe('eachStoredResult without zones, from Latin-1', () => {
  it('zone names beyond ASCII (quoted or not) are read once, from Latin-1, as the whole-file reader reads them', async () => {
    const text = csv([HEADER, row('S001', 'Café "Central", Ground', '12'), row('S001', 'Kasse ü', '3'), row('S002', 'Tills', '40')]);
    expect(Buffer.from(text).length).toBeGreaterThan(text.length);
    const { results, visitors } = await leanRead(text);
    expect(visitors).toBe(1);
    expect(results).toEqual(await wholeWithoutZones(text));
    expect(results.map(({ store_code, values }) => [store_code, values.map(({ unique_users }) => unique_users)])).toEqual([
      ['S001', ['12', '3']],
      ['S002', ['40']],
    ]);
  });

  it.each([
    ['a store code', csv([HEADER, row('S001', 'Café', '12'), row('Søn-2', 'Café', '3')]), 'Søn-2'],
    [
      'a date',
      csv([
        HEADER,
        row('S001', 'Café', '12'),
        [...row('S002', 'Tills', '3').slice(0, 1), '2026-11-20T00:00:00+02:00 é', ...row('S002', 'Tills', '3').slice(2)],
      ]),
      'S002',
    ],
    ['a value', csv([HEADER, row('S001', 'Café', '12'), row('S002', 'Tills', '3½')]), 'S002'],
  ])('%s beyond ASCII is read again as UTF-8, as written', async (_what, text, code) => {
    const { results, visitors } = await leanRead(text);
    expect(visitors).toBe(2);
    expect(results).toEqual(await wholeWithoutZones(text));
    expect(results.map(({ store_code }) => store_code)).toContain(code);
    expect(JSON.stringify(results)).not.toMatch(/Ã/);
  });

  it('a column name beyond ASCII, or columns not in the writer’s order, are read as UTF-8 by their names', async () => {
    const named = csv([[...HEADER.slice(0, 5), 'unique_üsers'], row('S001', 'Café', '12')]);
    const named_ = await leanRead(named);
    expect(named_.results).toEqual([{ store_code: 'S001', date: DATE, granularity: 'daily', values: [{ unique_üsers: '12' }] }]);
    const reordered = csv([
      ['zone', ...HEADER.slice(0, 4), 'unique_users'],
      ['Café', ...row('S001', '', '12').slice(0, 4), '12'],
    ]);
    const reordered_ = await leanRead(reordered);
    expect(reordered_.results).toEqual(await wholeWithoutZones(reordered));
    expect(reordered_.results).toEqual([{ store_code: 'S001', date: DATE, granularity: 'daily', values: [{ unique_users: '12' }] }]);
  });

  it('Windows line ends and a zone spanning lines read as the whole-file reader reads them', async () => {
    const text = csv([HEADER, row('S001', 'Café', '12'), row('S002', 'Up\nstairs é', '3')]);
    for (const each of [text, text.replaceAll('\n', '\r\n')]) {
      const { results } = await leanRead(each);
      // The whole-file reader, which a field spanning lines comes to, keeps the zones.
      expect(results.map((result) => ({ ...result, values: result.values.map(({ zone: _zone, ...rest }) => rest) }))).toEqual(
        await wholeWithoutZones(each),
      );
    }
  });
});
