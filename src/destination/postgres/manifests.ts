import type { ManifestShelf, RunManifest } from '../../output/run-manifest.js';
import { inTransaction, type Session } from './session.js';
import { ensureRunSequence, OWN_TABLES, quoteName } from './tables.js';

/**
 * The run manifests as rows of `area_metrics_runs`: the run id, its start, end and exit code as columns, the whole
 * manifest (its units with their status) as `jsonb`, and `seq`, the order the rows became visible, so a loader
 * selects the rows after the last `seq` it read and misses none.
 */
export class PostgresManifests implements ManifestShelf {
  constructor(private readonly session: Session) {}

  private get table(): string {
    return `${quoteName(this.session.target.schema)}.${OWN_TABLES.runs}`;
  }

  private locationOf(runId: string, seq: string): string {
    return `${this.session.target.shown} (table ${this.session.target.schema}.${OWN_TABLES.runs}, seq ${seq}, run ${runId})`;
  }

  /**
   * One transaction: the table locked against other writers (readers still read), `seq` one more than the highest,
   * the row inserted, committed. The lock is held until the commit, so the next writer's `seq` is taken only once this
   * row is visible: rows become visible in `seq` order, whatever runs, `accept`s and `reopen`s overlap.
   */
  async publish(manifest: RunManifest, text: string): Promise<string> {
    const { schema } = this.session.target;
    const seq = await this.session.use('cannot write the run manifest to', async (client) => {
      await ensureRunSequence(client, schema);
      return inTransaction(client, async () => {
        // EXCLUSIVE conflicts with itself and with writers, not with SELECT; it needs DELETE, which a run has.
        await client.query(`LOCK TABLE ${this.table} IN EXCLUSIVE MODE`);
        await client.query(`DELETE FROM ${this.table} WHERE run_id = $1`, [manifest.runId]);
        const { rows } = await client.query<{ seq: string }>(
          `INSERT INTO ${this.table} (seq, run_id, started_at, ended_at, exit_code, manifest) ` +
            `SELECT coalesce(max(seq), 0) + 1, $1, $2, $3, $4, $5 FROM ${this.table} RETURNING seq`,
          [manifest.runId, manifest.start, manifest.end, manifest.exitCode, text],
        );
        return rows[0]?.seq ?? '?';
      });
    });
    return this.locationOf(manifest.runId, seq);
  }

  /** The rows beyond the newest `keep` by `seq`, deleted. */
  prune(keep: number): Promise<number> {
    return this.session.use('cannot remove old run manifests from', async (client) => {
      const { rowCount } = await client.query(
        `DELETE FROM ${this.table} WHERE seq < (SELECT min(seq) FROM (SELECT seq FROM ${this.table} ORDER BY seq DESC LIMIT $1) AS newest)`,
        [keep],
      );
      return rowCount ?? 0;
    });
  }
}
