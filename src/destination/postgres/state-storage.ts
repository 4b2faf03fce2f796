import type { StateStorage } from '../../state/storage/storage.js';
import { inTransaction, type Session } from './session.js';
import { OWN_TABLES, quoteName } from './tables.js';

/** The state's row in the state table. */
const STATE_ROW = 'state';

/**
 * The state's text as a row of `area_metrics_state` beside the data, so a run on a machine with no lasting disk (a
 * CronJob) needs nothing but the database. `update` reads and replaces it in one transaction with the table locked
 * against other writers (`status` still reads); it deletes and inserts rather than updates, so the role needs no
 * UPDATE privilege.
 */
export class PostgresStateStorage implements StateStorage {
  constructor(private readonly session: Session) {}

  get location(): string {
    return `${this.session.target.shown} (table ${this.table})`;
  }

  get absence(): string {
    return `no state in ${this.location}: nothing has been imported into schema ${this.session.target.schema} of that database yet`;
  }

  private get table(): string {
    return `${this.session.target.schema}.${OWN_TABLES.state}`;
  }

  private get qualified(): string {
    return `${quoteName(this.session.target.schema)}.${OWN_TABLES.state}`;
  }

  read(): Promise<string | undefined> {
    return this.session.use('cannot read the state from', async (client) => {
      // A database no run has written to yet has no state table: no state, like a folder without its file.
      const found = await client.query<{ table: string | null }>('SELECT to_regclass($1)::text AS table', [this.qualified]);
      if (!found.rows[0]?.table) return undefined;
      const { rows } = await client.query<{ body: string }>(`SELECT body FROM ${this.qualified} WHERE name = $1`, [STATE_ROW]);
      return rows[0]?.body;
    });
  }

  update(change: (current: string | undefined) => string | undefined): Promise<void> {
    return this.session.use('cannot write the state to', async (client) => {
      await inTransaction(client, async () => {
        await client.query(`LOCK TABLE ${this.qualified} IN EXCLUSIVE MODE`);
        const { rows } = await client.query<{ body: string }>(`SELECT body FROM ${this.qualified} WHERE name = $1`, [STATE_ROW]);
        const next = change(rows[0]?.body);
        if (next === undefined) return;
        await client.query(`DELETE FROM ${this.qualified} WHERE name = $1`, [STATE_ROW]);
        await client.query(`INSERT INTO ${this.qualified} (name, body) VALUES ($1, $2)`, [STATE_ROW, next]);
      });
    });
  }
}
