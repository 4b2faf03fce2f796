import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Client } from 'pg';
import type { ParquetColumn } from '../../output/parquet.js';
import { rejectedLines, unitChunks, type UnitContent, type UnitSink, type UnitWrite } from '../../output/sinks.js';
import type { DayMode } from '../../window/day-mode.js';
import { inTransaction, type Session } from './session.js';
import { OWN_TABLES, quoteName, tableNameOf } from './tables.js';
import { unitDigest } from './unit-digest.js';
import { unitRows, type UnitKey } from './unit-rows.js';

/**
 * Each unit into its metric's table as one transaction: its old rows deleted (its day's, and its store's with
 * `--store`), the new ones loaded with `COPY ... FROM STDIN` in CSV (the unit's own CSV rows, as a file would hold
 * them: the server types each field from that text), and its coverage (the rows' SHA-256, their count) and
 * set-aside records written, then committed, so a crash leaves the unit's old rows or its new ones, never a mix. A
 * unit whose digest equals its coverage's is left untouched: no statement writes, no new row versions.
 */
export class PostgresSink implements UnitSink {
  constructor(
    /** The connections units are loaded on; each unit is one transaction on one of them. */
    private readonly sessions: readonly [Session, ...Session[]],
    /** Each metric's columns, in the CSV's order. */
    private readonly columns: ReadonlyMap<string, readonly ParquetColumn[]>,
    /** What the run's days are: which rows a unit replaces. */
    private readonly mode: DayMode,
  ) {}

  private get schema(): string {
    return this.sessions[0].target.schema;
  }

  private leastBusy(): Session {
    return this.sessions.reduce((best, session) => (session.busy < best.busy ? session : best));
  }

  async commit(data: UnitContent): Promise<UnitWrite> {
    const key: UnitKey = { metric: data.unit.metric.name, day: data.unit.day, store: data.unit.storeCode ?? '' };
    const rejected = rejectedLines(data);
    const digest = unitDigest(data, rejected);
    const file = { path: `${this.schema}.${tableNameOf(key.metric)}`, bytes: digest.bytes, sha256: digest.sha256 };
    // Where the rows went, as logs and the tally name a unit's file: the table and the unit.
    const path = this.describe(data);
    return this.leastBusy().use(`cannot load ${path} into`, async (client) => {
      const units = `${quoteName(this.schema)}.${OWN_TABLES.units}`;
      const stored = await client.query<{ sha256: string; rows: string }>(
        `SELECT sha256, rows FROM ${units} WHERE metric = $1 AND day = $2 AND store = $3`,
        [key.metric, key.day, key.store],
      );
      const coverage = stored.rows[0];
      // The same rows as the coverage says, and the table still holds the unit (not dropped, emptied or pruned since).
      if (coverage?.sha256 === digest.sha256 && (Number(coverage.rows) === 0 || (await this.holdsRows(client, key))))
        return { changed: false, path, file };
      await inTransaction(client, async () => {
        await this.replaceRows(client, data, key);
        // Coverage of the day's other units goes: a day's unit replaces its stores' units, a store's unit the day's.
        await client.query(`DELETE FROM ${units} WHERE metric = $1 AND day = $2 AND ($3 = '' OR store IN ($3, ''))`, [
          key.metric,
          key.day,
          key.store,
        ]);
        await client.query(`INSERT INTO ${units} (metric, day, store, sha256, rows, bytes) VALUES ($1, $2, $3, $4, $5, $6)`, [
          key.metric,
          key.day,
          key.store,
          digest.sha256,
          data.rowCount ?? 0,
          digest.bytes,
        ]);
        await this.replaceRejected(client, key, rejected);
      });
      return { changed: true, path, file };
    });
  }

  describe(data: Pick<UnitContent, 'unit'>): string {
    const { metric, day, storeCode } = data.unit;
    return `${this.schema}.${tableNameOf(metric.name)} ${day}${storeCode === undefined ? '' : ` store ${storeCode}`}`;
  }

  /** The unit's rows replaced by its new ones (see `unitRows`). */
  private async replaceRows(client: Client, data: UnitContent, key: UnitKey): Promise<void> {
    // Loaded with pg: only when a unit goes to a database.
    const { from: copyFrom } = await import('pg-copy-streams');
    const qualified = this.tableOf(key);
    const { where, values } = unitRows(this.mode, key);
    await client.query(`DELETE FROM ${qualified} WHERE ${where}`, values);
    const columns = (this.columns.get(key.metric) ?? []).map((column) => quoteName(column.name)).join(', ');
    // No column is ever NULL: an empty field is an empty text, never a NULL the table would refuse.
    const copy = `COPY ${qualified} (${columns}) FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL (${columns}))`;
    await pipeline(Readable.from(unitChunks(data, false)), client.query(copyFrom(copy)));
  }

  /**
   * Whether the table holds rows of the unit: one probe of the key, not a count of the rows (which reads them all,
   * and would cost an unchanged re-run as much as the rows' load); what it guards against is a table dropped or
   * emptied, or a day pruned, behind the tool's back, and the coverage row its digest is compared with is committed
   * with the rows.
   */
  private async holdsRows(client: Client, key: UnitKey): Promise<boolean> {
    const { where, values } = unitRows(this.mode, key);
    const found = await client.query<{ held: boolean }>(`SELECT EXISTS (SELECT FROM ${this.tableOf(key)} WHERE ${where}) AS held`, values);
    return found.rows[0]?.held === true;
  }

  private tableOf(key: UnitKey): string {
    return `${quoteName(this.schema)}.${quoteName(tableNameOf(key.metric))}`;
  }

  private async replaceRejected(client: Client, key: UnitKey, lines: readonly string[]): Promise<void> {
    const rejected = `${quoteName(this.schema)}.${OWN_TABLES.rejected}`;
    await client.query(`DELETE FROM ${rejected} WHERE metric = $1 AND day = $2 AND ($3 = '' OR store = $3)`, [
      key.metric,
      key.day,
      key.store,
    ]);
    if (lines.length === 0) return;
    // jsonb holds no NUL character, which a record set aside for its control characters may carry: U+FFFD stands in.
    const storable = lines.map((line) => line.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd'));
    // Each under its record's store (a day's unit holds every store's), so that a load of that store alone replaces it.
    await client.query(
      `INSERT INTO ${rejected} (metric, day, store, record) ` +
        `SELECT $1, $2, COALESCE(NULLIF($3, ''), line::jsonb->'record'->>'store_code', ''), line::jsonb FROM unnest($4::text[]) AS line`,
      [key.metric, key.day, key.store, storable],
    );
  }
}
