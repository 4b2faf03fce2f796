import { stringify } from 'csv-stringify/sync';
import { COMMON_COLUMNS, columnNames, type MetricDescriptor, type MetricRow } from '../metrics/descriptors.js';

export type OutputFormat = 'csv' | 'ndjson';
export type OutputShape = 'rows' | 'results';

/** Rows per chunk handed to a writer: big enough to keep syscalls few, small enough to keep memory flat. */
const CHUNK_ROWS = 4096;

function* chunked<T>(items: readonly T[], render: (batch: readonly T[]) => string): Generator<string> {
  for (let start = 0; start < items.length; start += CHUNK_ROWS) yield render(items.slice(start, start + CHUNK_ROWS));
}

export function csvHeader(metric: MetricDescriptor): string {
  return stringify([columnNames(metric)], { eof: true, record_delimiter: 'unix' });
}

/** RFC 4180 CSV (quotes only where needed), LF line endings, the metric's exact column order. */
export function* csvChunks(metric: MetricDescriptor, rows: readonly MetricRow[]): Generator<string> {
  const cells = [
    ...COMMON_COLUMNS.map((name) => (row: MetricRow) => String(row[name])),
    ...metric.columns.map((column) => column.csv ?? ((row: MetricRow) => String(row[column.name]))),
  ];
  yield* chunked(rows, (batch) =>
    stringify(
      batch.map((row) => cells.map((cell) => cell(row))),
      { eof: true, record_delimiter: 'unix', quoted_match: /\r/ },
    ),
  );
}

/** One JSON object per line: `metric` first, then the columns in order, with their NDJSON types. */
export function* ndjsonRowChunks(metric: MetricDescriptor, rows: readonly MetricRow[]): Generator<string> {
  const names = columnNames(metric);
  yield* chunked(rows, (batch) => {
    let text = '';
    for (const row of batch) {
      const line: Record<string, string | number | undefined> = { metric: metric.name };
      for (const name of names) line[name] = row[name];
      text += `${JSON.stringify(line)}\n`;
    }
    return text;
  });
}

/** `--shape results`: one line per API result object as received, with `metric` first. */
export function* ndjsonResultChunks(metric: MetricDescriptor, results: readonly unknown[]): Generator<string> {
  yield* chunked(results, (batch) =>
    batch.map((result) => `${JSON.stringify({ metric: metric.name, ...(result as object) })}\n`).join(''),
  );
}
