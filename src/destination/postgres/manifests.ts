import type { ManifestShelf } from '../../output/run-manifest.js';
import { inTransaction, type Session } from './session.js';
import { OWN_TABLES, quoteName } from './tables.js';

const SUFFIX = '.json';

/**
 * The run manifests as rows of `area_metrics_runs`: the run id, its start, end and exit code as columns, the whole
 * manifest (its units with their status) as `jsonb`, so a loader selects the runs it has not seen and their units.
 */
export class PostgresManifests implements ManifestShelf {
  constructor(private readonly session: Session) {}

  private get table(): string {
    return `${quoteName(this.session.target.schema)}.${OWN_TABLES.runs}`;
  }

  private runIdOf(name: string): string {
    return name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name;
  }

  locationOf(name: string): string {
    return `${this.session.target.shown} (table ${this.session.target.schema}.${OWN_TABLES.runs}, run ${this.runIdOf(name)})`;
  }

  write(name: string, text: string): Promise<void> {
    const manifest = JSON.parse(text) as { start: string; end: string; exitCode: number };
    const runId = this.runIdOf(name);
    return this.session.use('cannot write the run manifest to', async (client) => {
      await inTransaction(client, async () => {
        await client.query(`DELETE FROM ${this.table} WHERE run_id = $1`, [runId]);
        await client.query(`INSERT INTO ${this.table} (run_id, started_at, ended_at, exit_code, manifest) VALUES ($1, $2, $3, $4, $5)`, [
          runId,
          manifest.start,
          manifest.end,
          manifest.exitCode,
          text,
        ]);
      });
    });
  }

  names(): Promise<string[]> {
    return this.session.use('cannot list the run manifests in', async (client) => {
      const { rows } = await client.query<{ run_id: string }>(`SELECT run_id FROM ${this.table}`);
      return rows.map((row) => `${row.run_id}${SUFFIX}`);
    });
  }

  remove(name: string): Promise<void> {
    return this.session.use('cannot remove a run manifest from', async (client) => {
      await client.query(`DELETE FROM ${this.table} WHERE run_id = $1`, [this.runIdOf(name)]);
    });
  }
}
