import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/** A row as DuckDB hands it out as JSON: DECIMAL, BIGINT and dates come back as their exact text. */
export type DuckRow = Record<string, unknown>;

/**
 * An in-memory DuckDB, the reader our Parquet files are checked with (written by nobody here), on one thread so
 * that a file's rows come back in the file's order.
 */
export class DuckDb {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<DuckDb> {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    return new DuckDb(instance, connection);
  }

  async rows(sql: string): Promise<DuckRow[]> {
    const reader = await this.connection.runAndReadAll(sql);
    return reader.getRowObjectsJson();
  }

  /** The columns of `source` (a table, or `read_parquet(...)`) as DuckDB types them, in order, each as `name TYPE`. */
  async columns(source: string): Promise<string[]> {
    const rows = await this.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${source})`);
    return rows.map((row) => `${String(row.column_name)} ${String(row.column_type)}`);
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** A path as a SQL string literal. */
export function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
