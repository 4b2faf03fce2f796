import { eachStoredResult, storedResults, type StoredResult } from '../../src/output/read-back.js';

/**
 * A CSV's results read without zones, as a backtest adds a day up, and how many times the reader asked for a visitor:
 * 1 when one pass took the file, 2 when it read the file again another way.
 */
export async function leanRead(text: string): Promise<{ results: StoredResult[]; visitors: number }> {
  let results: StoredResult[] = [];
  let visitors = 0;
  await eachStoredResult(
    Buffer.from(text),
    'csv',
    () => {
      visitors++;
      const seen: StoredResult[] = [];
      results = seen;
      return (result) => seen.push(result);
    },
    { zones: false },
  );
  return { results, visitors };
}

/** The whole-file reader's results of a CSV, without their zones: what a lean read must give. */
export async function wholeWithoutZones(text: string): Promise<StoredResult[]> {
  return (await storedResults(Buffer.from(text), 'csv')).map((result) => ({
    ...result,
    values: result.values.map(({ zone: _zone, ...rest }) => rest),
  }));
}
