/**
 * Unit files read back as results: what the tool's own CSV writer quotes (a zone name with a comma, a quote, a line
 * break) comes back as written; NDJSON rows and `results` lines alike; rows of one store and instant are one result.
 */
import { describe, expect, it } from 'vitest';
import { csvLine } from '../../src/output/format.js';
import { eachStoredResult, storedResults, type StoredResult } from '../../src/output/read-back.js';

const HEADER = ['store_code', 'date', 'day', 'granularity', 'zone', 'unique_users'];
const ROWS = [
  ['S001', '2026-11-20T00:00:00+02:00', '2026-11-20', 'daily', 'Entrance, north', '12'],
  ['S001', '2026-11-20T00:00:00+02:00', '2026-11-20', 'daily', 'The "Café"\nupstairs', '3'],
  ['S002', '2026-11-20T00:00:00-05:00', '2026-11-20', 'daily', 'Tills', '40'],
];
/** The store and instant of the results of ROWS: S001's first two rows, S002's last. */
const S001_DAY = { store_code: 'S001', date: '2026-11-20T00:00:00+02:00', granularity: 'daily' };
const S002_DAY = { store_code: 'S002', date: '2026-11-20T00:00:00-05:00', granularity: 'daily' };

describe('storedResults', () => {
  it('CSV as the writer quotes it: a result per store and instant, each zone with its value text', async () => {
    const text = [HEADER, ...ROWS].map((fields) => csvLine(fields)).join('');
    expect(text).toContain('"The ""Café""');
    expect(await storedResults(Buffer.from(text), 'csv')).toEqual([
      {
        ...S001_DAY,
        values: [
          { zone: 'Entrance, north', unique_users: '12' },
          { zone: 'The "Café"\nupstairs', unique_users: '3' },
        ],
      },
      { ...S002_DAY, values: [{ zone: 'Tills', unique_users: '40' }] },
    ]);
  });

  it('CSV without a quote takes the plain path and reads the same', async () => {
    const plain = [HEADER, ROWS[2]!, [...ROWS[2]!.slice(0, 4), 'Back', '7']].map((fields) => csvLine(fields)).join('');
    expect(await storedResults(Buffer.from(plain), 'csv')).toEqual([
      {
        ...S002_DAY,
        values: [
          { zone: 'Tills', unique_users: '40' },
          { zone: 'Back', unique_users: '7' },
        ],
      },
    ]);
  });

  it('CSV whose quotes all close on their line takes the line path and reads as the writer quoted it', async () => {
    const zones = ['"quoted" start', 'a, b', 'end ""quoted""', ',', '', 'x"y'];
    const rows = zones.map((zone, index) => [...ROWS[0]!.slice(0, 4), zone, String(index)]);
    const text = [HEADER, ...rows, ROWS[2]!].map((fields) => csvLine(fields)).join('');
    expect(text).not.toContain('\r');
    const expected = [
      { ...S001_DAY, values: zones.map((zone, index) => ({ zone, unique_users: String(index) })) },
      { ...S002_DAY, values: [{ zone: 'Tills', unique_users: '40' }] },
    ];
    expect(await storedResults(Buffer.from(text), 'csv')).toEqual(expected);
    // Windows line ends read the same.
    expect(await storedResults(Buffer.from(text.replaceAll('\n', '\r\n')), 'csv')).toEqual(expected);
  });

  it('eachStoredResult gives storedResults one at a time; a field spanning lines restarts it on the whole-file parser', async () => {
    const oneLine = [HEADER, ROWS[0]!, ROWS[2]!].map((fields) => csvLine(fields)).join('');
    const spanning = [HEADER, ROWS[2]!, ...ROWS].map((fields) => csvLine(fields)).join('');
    for (const text of [oneLine, spanning]) {
      const visitors: StoredResult[][] = [];
      await eachStoredResult(Buffer.from(text), 'csv', () => {
        const seen: StoredResult[] = [];
        visitors.push(seen);
        return (result) => seen.push(result);
      });
      expect(visitors.at(-1)).toEqual(await storedResults(Buffer.from(text), 'csv'));
      // The line path gave up at the first line it could not read alone, having passed on the results before it.
      expect(visitors.map((seen) => seen.length)).toEqual(text === oneLine ? [2] : [1, 3]);
    }
    // Without zones: the same results, their entries without a zone (the writer's columns are cut, not split).
    const zones = ['Tills', '"quoted" start', 'a, b', '', 'end ""x""'];
    const many = [HEADER, ...zones.map((zone, index) => [`S00${index % 2}`, ROWS[0]![1]!, '2026-11-20', 'daily', zone, String(index)])];
    for (const ending of ['\n', '\r\n']) {
      const text = many.map((fields) => csvLine(fields).replace('\n', ending)).join('');
      const lean: StoredResult[] = [];
      await eachStoredResult(Buffer.from(text), 'csv', () => (result) => lean.push(result), { zones: false });
      const full = await storedResults(Buffer.from(text), 'csv');
      expect(full.map(({ values }) => values.map(({ zone }) => zone)).flat()).toEqual(zones);
      expect(lean).toEqual(full.map((result) => ({ ...result, values: result.values.map(({ zone: _zone, ...rest }) => rest) })));
      const zoned: StoredResult[] = [];
      await eachStoredResult(Buffer.from(text), 'csv', () => (result) => zoned.push(result));
      expect(zoned).toEqual(full);
    }
    const ndjson = ROWS.map((fields) => JSON.stringify(Object.fromEntries(HEADER.map((name, index) => [name, fields[index]])))).join('\n');
    const seen: StoredResult[] = [];
    await eachStoredResult(Buffer.from(ndjson), 'ndjson', () => (result) => seen.push(result));
    expect(seen).toEqual(await storedResults(Buffer.from(ndjson), 'ndjson'));
  });

  it('NDJSON rows (the metric field left out) and results lines give the same results', async () => {
    const rows = ROWS.map((fields) =>
      JSON.stringify({
        metric: 'unique-users',
        ...Object.fromEntries(HEADER.map((name, index) => [name, index === 5 ? Number(fields[index]) : fields[index]])),
      }),
    );
    const fromRows = await storedResults(Buffer.from(`${rows.join('\n')}\n`), 'ndjson');
    const lines = fromRows.map((result) => JSON.stringify({ metric: 'unique-users', ...result }));
    expect(await storedResults(Buffer.from(`${lines.join('\n')}\n`), 'ndjson')).toEqual(fromRows);
    expect(fromRows.map(({ store_code, values }) => [store_code, values.map((entry) => entry.unique_users)])).toEqual([
      ['S001', [12, 3]],
      ['S002', [40]],
    ]);
  });
});
