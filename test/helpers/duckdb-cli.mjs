#!/usr/bin/env node
// `duckdb -c "<sql>"` for the examples test where the DuckDB CLI is not installed: the query run by DuckDB's Node
// client in the current folder, each row printed as a JSON line. A query that returns no row exits 3, since an
// example that reads nothing (a pipe DuckDB reads as empty, a glob that matches no file) is a broken example.
import { DuckDBInstance } from '@duckdb/node-api';

const at = process.argv.indexOf('-c');
const sql = at === -1 ? undefined : process.argv[at + 1];
if (sql === undefined) {
  process.stderr.write('duckdb (examples stand-in): only -c "<sql>" is understood\n');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
try {
  const rows = (await connection.runAndReadAll(sql)).getRowObjectsJson();
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
  process.exitCode = rows.length === 0 ? 3 : 0;
} catch (error) {
  process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  connection.closeSync();
  instance.closeSync();
}
