/**
 * A result as a unit file holds it again: a store's day, with one entry per zone (its zone and the metric's value
 * columns, as the file typed them: CSV text, NDJSON numbers, Parquet values).
 */
export interface StoredResult {
  readonly store_code: string;
  readonly date: string;
  readonly granularity: 'daily';
  readonly values: Record<string, unknown>[];
}
