import { describe, expect, it } from 'vitest';
import { PostgresManifests } from '../../../src/destination/postgres/manifests.js';
import { Session } from '../../../src/destination/postgres/session.js';
import { ensureSchema } from '../../../src/destination/postgres/tables.js';
import { parsePostgresUrl, resolveTarget } from '../../../src/destination/postgres/url.js';
import { silentLogger } from '../../../src/log/logger.js';
import { formatManifest, newRunId, RunManifestBuilder, saveManifest, type RunManifest } from '../../../src/output/run-manifest.js';
import { waitUntil } from '../../helpers/cli.js';
import { usePostgres, warnIfPostgresMissing, type TestPostgres } from '../../helpers/postgres.js';

/** The runs table's `seq` against a real server: numbered in commit order under writers racing, old tables numbered in place. */
const skip = warnIfPostgresMissing('the PostgreSQL manifest tests');
let server: TestPostgres;
let schemas = 0;

const manifestOf = (runId: string): RunManifest =>
  new RunManifestBuilder(
    { runId, version: '0.1.0', command: 'all', start: new Date(), layout: 'flat', format: 'csv', days: 'utc' },
    [],
  ).build({
    end: new Date(),
    exitCode: 0,
    notAttempted: '',
  });

/** A session on a fresh schema of the cluster, as a run opens one. */
function sessionOn(schema: string): Session {
  const url = parsePostgresUrl(server.url({ params: { schema } }), '-o');
  return new Session(url, resolveTarget(url, {}), { env: {}, retries: 0, logger: silentLogger });
}

const seqs = async (schema: string): Promise<{ seq: string; run_id: string }[]> =>
  server.query(`SELECT r.seq::text AS seq, r.run_id FROM ${schema}.area_metrics_runs r ORDER BY r.seq`);

describe.skipIf(skip)('run manifests as rows', () => {
  // The file's helpers above read `server`: the cluster's live view, started before these tests.
  server = usePostgres();

  it('writers racing, each on a connection of its own: seq 1..n, each row once, and no reader sees a seq before a lower one', async () => {
    const schema = `race_${++schemas}`;
    const setup = sessionOn(schema);
    await setup.use('setup', (client) => ensureSchema(client, schema));
    await setup.close();
    const writers = 10;
    const sessions = Array.from({ length: writers }, () => sessionOn(schema));
    const reader = await server.connect();
    const snapshots: number[][] = [];
    let done = false;
    const reading = (async () => {
      while (!done) {
        const { rows } = await reader.query<{ seq: string }>(`SELECT r.seq::text AS seq FROM ${schema}.area_metrics_runs r ORDER BY r.seq`);
        snapshots.push(rows.map((row) => Number(row.seq)));
      }
    })();
    try {
      const ids = Array.from({ length: writers }, () => newRunId());
      const saved = await Promise.all(ids.map((id, index) => saveManifest(new PostgresManifests(sessions[index]!), manifestOf(id))));
      done = true;
      await reading;
      const rows = await seqs(schema);
      expect(rows.map((row) => Number(row.seq))).toEqual(Array.from({ length: writers }, (_, index) => index + 1));
      expect(rows.map((row) => row.run_id).sort()).toEqual([...ids].sort());
      expect(saved.map((entry) => entry.location).join('\n')).toMatch(/seq \d+, run /);
      // Every snapshot a reader took was 1..k: a row visible means every lower seq was visible before it.
      for (const snapshot of snapshots) expect(snapshot).toEqual(Array.from({ length: snapshot.length }, (_, index) => index + 1));
    } finally {
      done = true;
      await reader.end();
      await Promise.all(sessions.map((session) => session.close()));
    }
  });

  it('a writer that commits late is seen before one that started after it: seq is commit order, not start order', async () => {
    const schema = `late_${++schemas}`;
    const first = sessionOn(schema);
    const second = sessionOn(schema);
    await first.use('setup', (client) => ensureSchema(client, schema));
    // A third party holds a lock that the first writer's transaction waits behind; the second comes later, waits too.
    const blocker = await server.connect();
    await blocker.query('BEGIN');
    await blocker.query(`LOCK TABLE ${schema}.area_metrics_runs IN ACCESS SHARE MODE`);
    await blocker.query(`LOCK TABLE ${schema}.area_metrics_runs IN ROW EXCLUSIVE MODE`);
    try {
      const early = newRunId(Date.now() - 60_000);
      const late = newRunId();
      const publishedLate = new PostgresManifests(second).publish(manifestOf(late), formatManifest(manifestOf(late)));
      const waiting = async (): Promise<number> =>
        (
          await server.query<{ count: number }>(
            'SELECT count(*)::int AS count FROM pg_locks WHERE relation = $1::regclass AND NOT granted',
            [`${schema}.area_metrics_runs`],
          )
        )[0]!.count;
      await waitUntil(async () => (await waiting()) === 1, 'the later run waiting for the table');
      const publishedEarly = new PostgresManifests(first).publish(manifestOf(early), formatManifest(manifestOf(early)));
      await waitUntil(async () => (await waiting()) === 2, 'the earlier run waiting behind it');
      await blocker.query('COMMIT');
      await Promise.all([publishedLate, publishedEarly]);
      // The run that started first but published last has the higher seq: a loader past `late` still reads it.
      expect((await seqs(schema)).map((row) => row.run_id)).toEqual([late, early]);
    } finally {
      await blocker.end();
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("an earlier release's runs table gets seq in place, its rows numbered in run-id order; the next manifest after them; pruning by seq", async () => {
    const schema = `old_${++schemas}`;
    await server.query(`CREATE SCHEMA ${schema}`);
    await server.query(
      `CREATE TABLE ${schema}.area_metrics_runs (run_id text PRIMARY KEY, started_at timestamptz NOT NULL, ended_at timestamptz NOT NULL, exit_code integer NOT NULL, manifest jsonb NOT NULL)`,
    );
    const old = [3, 1, 2].map((minute) => newRunId(Date.parse('2026-11-01T00:00:00Z') + minute * 60_000));
    for (const id of old) {
      await server.query(`INSERT INTO ${schema}.area_metrics_runs VALUES ($1, now(), now(), 0, '{}')`, [id]);
    }
    const session = sessionOn(schema);
    try {
      // accept and reopen publish without the run's preparation: the table is numbered there too.
      const newest = newRunId();
      await saveManifest(new PostgresManifests(session), manifestOf(newest), 3);
      expect(await seqs(schema)).toEqual([
        { seq: '2', run_id: [...old].sort()[1] },
        { seq: '3', run_id: [...old].sort()[2] },
        { seq: '4', run_id: newest },
      ]);
      const columns = await server.query<{ is_nullable: string }>(
        "SELECT is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'area_metrics_runs' AND column_name = 'seq'",
        [schema],
      );
      expect(columns).toEqual([{ is_nullable: 'NO' }]);
      await expect(server.query(`INSERT INTO ${schema}.area_metrics_runs VALUES ('x', now(), now(), 0, '{}', 4)`)).rejects.toThrow(
        /unique/i,
      );
    } finally {
      await session.close();
    }
  });
});
