import { describe, expect, it } from 'vitest';
import { checkOutputOptions, type DestinationCapabilities, type OutputOptions } from '../../src/destination/capabilities.js';
import { ObjectStores } from '../../src/destination/object-stores.js';
import { capabilitiesOf, openDestination } from '../../src/destination/open.js';
import { destinationSpec } from '../../src/destination/spec.js';
import { UsageError } from '../../src/errors.js';
import { NO_DATABASE } from '../helpers/import-config.js';

/** A run of one metric into a destination with no option about it given. */
const PLAIN: OutputOptions = {
  format: undefined,
  formatFrom: undefined,
  layoutFrom: undefined,
  shape: 'rows',
  state: undefined,
  catchUp: false,
  metricCount: 1,
};

/** The format a run gets, or the one line it is refused with. */
function outcome(held: DestinationCapabilities, run: Partial<OutputOptions>): string | undefined {
  try {
    return checkOutputOptions(held, { ...PLAIN, ...run });
  } catch (error) {
    if (error instanceof UsageError) return `refused: ${error.message}`;
    throw error;
  }
}

/**
 * A fifth kind, declared here only: a lake that takes Parquet files alone, of rows, with its state only where
 * --state names it, loading units as they come, one run at a time. It words one refusal itself; the rest are said
 * in general terms.
 */
const LAKE: DestinationCapabilities = {
  files: true,
  formats: ['parquet'],
  defaultFormat: 'parquet',
  shapes: ['rows'],
  state: 'named-only',
  keeps: ['mode', 'layout'],
  sharedHeader: false,
  commitsAhead: true,
  oneRunAtATime: true,
  refusals: { format: 'the lake holds Parquet only; drop -f' },
};

describe('a fifth destination, one row', () => {
  it.each<[Partial<OutputOptions>, string | undefined]>([
    [{}, 'parquet'],
    // Its files are laid out as a folder's are, and the environment's format does not choose among one.
    [{ layoutFrom: 'flag' }, 'parquet'],
    [{ format: 'csv', formatFrom: 'env' }, 'parquet'],
    [{ format: 'parquet', formatFrom: 'flag' }, 'refused: the lake holds Parquet only; drop -f'],
    [{ shape: 'results' }, 'refused: this output does not hold the shape asked for; drop --shape'],
    [{ catchUp: true }, 'refused: --catch-up needs --state <file> to remember the last complete day'],
    [{ catchUp: true, state: './lake-state.json' }, 'parquet'],
    [{ metricCount: 3 }, 'parquet'],
  ])('%j: %s', (run, expected) => {
    expect(outcome(LAKE, run)).toBe(expected);
  });
});

describe("the four destinations' rows", () => {
  const folder = capabilitiesOf(destinationSpec('./out', '-o'));
  const bucket = capabilitiesOf(destinationSpec('s3://bucket/prefix', '-o'));
  const stream = capabilitiesOf(destinationSpec('-', '-o'));
  const database = capabilitiesOf(destinationSpec('postgresql://loader@db/metrics', '-o'));

  it.each<[string, DestinationCapabilities, Partial<OutputOptions>, string | undefined]>([
    // A folder's format is its state's unless stated; the environment's describes its files.
    ['folder', folder, {}, undefined],
    // A folder and a database remember the last complete day in a state of their own.
    ['folder', folder, { catchUp: true }, undefined],
    ['PostgreSQL', database, { catchUp: true }, 'csv'],
    ['folder', folder, { format: 'parquet', formatFrom: 'env' }, 'parquet'],
    ['folder', folder, { shape: 'results' }, 'ndjson'],
    [
      'folder',
      folder,
      { shape: 'results', format: 'parquet', formatFrom: 'flag' },
      'refused: --shape results is NDJSON only, not parquet; use --format ndjson',
    ],
    ['bucket', bucket, { layoutFrom: 'flag', metricCount: 3, format: 'csv', formatFrom: 'flag' }, 'csv'],
    ['stdout', stream, {}, 'ndjson'],
    ['stdout', stream, { format: 'parquet', formatFrom: 'env' }, 'ndjson'],
    [
      'stdout',
      stream,
      { format: 'parquet', formatFrom: 'flag' },
      'refused: Parquet is written to files only (a reader needs the whole file); use -o <dir>',
    ],
    [
      'stdout',
      stream,
      { format: 'csv', formatFrom: 'flag', metricCount: 3 },
      'refused: CSV on stdout needs a single metric (their columns differ); use --format ndjson or -o <dir>',
    ],
    ['stdout', stream, { layoutFrom: 'flag' }, 'refused: --layout names files in a folder or bucket; stdout (-o -) has none'],
    ['stdout', stream, { layoutFrom: 'env' }, 'ndjson'],
    // Two mistakes at once: the format's is said first, the layout's after.
    [
      'stdout',
      stream,
      { layoutFrom: 'flag', format: 'parquet', formatFrom: 'flag' },
      'refused: Parquet is written to files only (a reader needs the whole file); use -o <dir>',
    ],
    [
      'stdout',
      stream,
      { layoutFrom: 'flag', format: 'csv', formatFrom: 'flag', metricCount: 3 },
      'refused: CSV on stdout needs a single metric (their columns differ); use --format ndjson or -o <dir>',
    ],
    ['stdout', stream, { catchUp: true }, 'refused: --catch-up with -o - needs --state <file> to remember the last complete day'],
    ['stdout', stream, { catchUp: true, state: './state.json' }, 'ndjson'],
    ['PostgreSQL', database, { format: 'parquet', formatFrom: 'env' }, 'csv'],
    ['PostgreSQL', database, { layoutFrom: 'env' }, 'csv'],
    ...([{ format: 'csv', formatFrom: 'flag' }, { layoutFrom: 'flag' }, { shape: 'results' }] satisfies Partial<OutputOptions>[]).map(
      (run): [string, DestinationCapabilities, Partial<OutputOptions>, string] => [
        'PostgreSQL',
        database,
        run,
        'refused: -f, --layout and --shape results describe files; a PostgreSQL output has typed tables, so drop them',
      ],
    ),
    [
      'PostgreSQL',
      database,
      { state: './state.json' },
      'refused: a PostgreSQL output keeps its state in the database, beside the data; drop --state',
    ],
  ])('%s %j: %s', (_name, held, run, expected) => {
    expect(outcome(held, run)).toBe(expected);
  });

  it('are the ones the opened destinations carry', () => {
    const stores = new ObjectStores({ env: {}, forcePathStyle: true, retries: 0, timeoutMs: 1000, logger: NO_DATABASE.logger });
    for (const output of ['./out', 's3://bucket/prefix', '-', 'postgresql://loader@db/metrics']) {
      const spec = destinationSpec(output, '-o');
      const destination = openDestination(spec, { stores, stdout: process.stdout, database: NO_DATABASE });
      expect(destination.capabilities, output).toBe(capabilitiesOf(spec));
    }
    // Only the database admits one run at a time and loads units ahead of plan order.
    expect([folder, bucket, stream, database].map((held) => [held.oneRunAtATime, held.commitsAhead])).toEqual([
      [false, false],
      [false, false],
      [false, false],
      [true, true],
    ]);
  });
});
