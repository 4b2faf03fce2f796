/**
 * The one-pass reader of a CSV of the writer's own columns (read without zones, as a backtest adds a day up) gives
 * what the whole-file reader gives, line by line as the writer wrote it, and hands anything else back to it: an
 * odd line is never read another way than the whole-file reader reads it.
 */
import { describe, expect, it } from 'vitest';
import { leanRead, wholeWithoutZones } from '../helpers/read-back.js';

const HEADER = 'store_code,date,day,granularity,zone,avg_screen_time,avg_screen_time_seconds\n';
const DATE = '2026-11-20T00:00:00+02:00';
const line = (code: string, zone: string, values = '00:01:40,100', date = DATE): string =>
  `${code},${date},2026-11-20,daily,${zone},${values}\n`;

/** Files the one pass reads itself. */
const WRITTEN: readonly (readonly [string, string])[] = [
  [
    'a store a result, zones quoted with commas and quotes',
    `${HEADER}${line('S1', '"[1] Café ""Central"", Ground"')}${line('S1', 'Tills')}${line('S2', '"a, b"')}`,
  ],
  ['Windows line ends', `${HEADER}${line('S1', 'Tills')}${line('S2', '"x, ü"')}`.replaceAll('\n', '\r\n')],
  ['no line break after the last line', `${HEADER}${line('S1', 'Tills')}${line('S2', 'Back')}`.slice(0, -1)],
  ['a carriage return ending the file', `${HEADER}${line('S1', 'Tills').slice(0, -1)}\r`],
  ['empty lines before the header and between lines', `\n${HEADER}\n${line('S1', 'Tills')}\n\n${line('S1', 'Back')}`],
  ['a store again after another: a result of its own', `${HEADER}${line('S1', 'A')}${line('S2', 'B')}${line('S1', 'C')}`],
  [
    'the same store at another instant: a result of its own',
    `${HEADER}${line('S1', 'A')}${line('S1', 'B', undefined, '2026-11-20T00:00:00+01:00')}`,
  ],
  ['a code that starts as the one before', `${HEADER}${line('S1', 'A')}${line('S10', 'B')}${line('S1', 'C')}`],
  [
    'a value missing, one empty, a field more',
    `${HEADER}${line('S1', 'A', '00:01:40')}${line('S2', 'B', ',')}${line('S3', 'C', '00:00:01,1,extra')}`,
  ],
  ['a zone ending the line', `${HEADER}S1,${DATE},2026-11-20,daily,"Tills, 2"\nS2,${DATE},2026-11-20,daily,Back\n`],
  ['an empty code and zone', `${HEADER}${line('', '')}`],
  ['only a header', HEADER],
];

/** Files it hands to the whole-file reader, whatever they hold. */
const OTHERS: readonly (readonly [string, string])[] = [
  ['a zone spanning lines', `${HEADER}${line('S1', '"Up\nstairs"')}`],
  ['a quoted value', `${HEADER}${line('S1', 'A', '"00:01:40",100')}`],
  ['a quote inside an unquoted zone', `${HEADER}${line('S1', 'A "B"')}`],
  ['a quoted zone followed by more than a comma', `${HEADER}${line('S1', '"A"B')}`],
  ['a quote in the day', `${HEADER}S1,${DATE},"2026-11-20",daily,A,00:01:40,100\n`],
  ['a quote in a field after the values', `${HEADER}${line('S1', 'A', '00:01:40,100,"x"')}`],
  ['a line of two fields', `${HEADER}${line('S1', 'A')}S2,${DATE}\n`],
  ['a code beyond ASCII', `${HEADER}${line('S1', 'A')}${line('Sø', 'B')}`],
  ['a value beyond ASCII', `${HEADER}${line('S1', 'A', '00:01:40,1é')}`],
  ['a carriage return within a field', `${HEADER}${line('S1', 'A', '00:01:40,1\r0')}`],
  ['the columns in another order', `store_code,zone,date,day,granularity,unique_users\nS1,A,${DATE},2026-11-20,daily,3\n`],
  ['a quoted header', `"store_code",date,day,granularity,zone,unique_users\nS1,${DATE},2026-11-20,daily,A,3\n`],
];

describe('eachStoredResult without zones, one pass over the bytes', () => {
  it.each(WRITTEN)('%s: read in one pass, as the whole-file reader reads it', async (_what, text) => {
    const { results, visitors } = await leanRead(text);
    expect(visitors).toBe(1);
    expect(results).toEqual(await wholeWithoutZones(text));
  });

  it.each(OTHERS)('%s: as the whole-file reader reads it', async (_what, text) => {
    const { results } = await leanRead(text);
    // A field spanning lines comes from the whole-file reader itself, zones and all.
    expect(results.map((result) => ({ ...result, values: result.values.map(({ zone: _zone, ...rest }) => rest) }))).toEqual(
      await wholeWithoutZones(text),
    );
  });

  it('gives each result once, values as their text, in the order of the file', async () => {
    const text = `${HEADER}${line('S1', '"a, b"', '00:01:40,100')}${line('S1', 'c', '01:00:00,3600')}${line('S2', 'd', '00:00:05,5')}`;
    expect((await leanRead(text)).results).toEqual([
      {
        store_code: 'S1',
        date: DATE,
        granularity: 'daily',
        values: [
          { avg_screen_time: '00:01:40', avg_screen_time_seconds: '100' },
          { avg_screen_time: '01:00:00', avg_screen_time_seconds: '3600' },
        ],
      },
      { store_code: 'S2', date: DATE, granularity: 'daily', values: [{ avg_screen_time: '00:00:05', avg_screen_time_seconds: '5' }] },
    ]);
  });
});
