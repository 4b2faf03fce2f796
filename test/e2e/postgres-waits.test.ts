import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stopAllClis, waitUntil } from '../helpers/cli.js';
import { startPostgres, warnIfPostgresMissing, type TestPostgres } from '../helpers/postgres.js';
import { clockedCli, daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { SECRET_ENV, useSandbox } from '../helpers/vendor.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/**
 * Every wait of a run on a database ends: a table another session locks (exit 7 within lock_timeout, naming the
 * table), SIGTERM during that wait (143 within 5 s), SIGKILL during it (the server ends the dead run's session and its
 * lock within seconds), a network path that freezes (exit 7 once the server stays silent past the answer bound). The
 * signals and the frozen path go to the built binary; the lock's timeout is a run in this process.
 */
const skip = warnIfPostgresMissing('the PostgreSQL bounded-wait tests');
const CLOCK = noonToday();
const SCHEMA = 'waits';
const { runCli, startCli } = clockedCli(CLOCK, SECRET_ENV);
const day = daysBefore(CLOCK);
/** The tool's advisory lock class ("AMET"), as pg_locks shows it. */
const LOCK_CLASS = 0x414d4554;

const sandbox = useSandbox({ stores: 3, zones: 2, days: 10, seed: 11, clientId: 'pg-waits', now: () => CLOCK });
let server: TestPostgres;
let databases = 0;
const auth = () => ['--base-url', sandbox().url, '--client-id', sandbox().clientId];

/** A fresh, empty database. */
async function freshDatabase(): Promise<string> {
  const database = `waits_${++databases}`;
  await server.query(`CREATE DATABASE ${database}`);
  return database;
}

/** The `-o` URL of `database` with `params`. */
const urlOf = (database: string, params: Record<string, string> = {}) => server.url({ database, params: { schema: SCHEMA, ...params } });

/** The database the lock tests share: the traffic of day -2 loaded, so that its table is there to lock. */
let loaded: string;

/** A third session holding an ACCESS EXCLUSIVE lock on the schema's traffic table until released. */
async function lockTraffic(database: string): Promise<{ release: () => Promise<void> }> {
  const holder: pg.Client = await server.connect(database);
  await holder.query(`BEGIN; LOCK TABLE ${SCHEMA}.traffic IN ACCESS EXCLUSIVE MODE`);
  return {
    release: async () => {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
    },
  };
}

/** The server pids of the run's sessions (its application name says it is area-metrics) waiting on a lock. */
async function waitingOnLock(database: string): Promise<number[]> {
  const rows = await server.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'area-metrics %' AND wait_event_type = 'Lock'",
    [database],
  );
  return rows.map((row) => row.pid);
}

/** Sessions holding the tool's run lock on the database. */
async function runLocks(database: string): Promise<number> {
  const rows = await server.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid::bigint = $1 AND database = (SELECT oid FROM pg_database WHERE datname = $2)",
    [LOCK_CLASS, database],
  );
  return Number(rows[0]?.n);
}

describe.skipIf(skip)('-o postgresql:// never waits for ever', () => {
  beforeAll(async () => {
    server = await startPostgres();
    loaded = await freshDatabase();
    const first = await runCli(['traffic', ...auth(), '--date', day(2), '-o', urlOf(loaded)]);
    expect(first.code, first.stderr).toBe(0);
  });
  afterEach(async () => {
    await stopAllClis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a table another session locks: exit 7 within lock_timeout, one line naming the table and the bound', async () => {
    const at = { database: loaded, url: urlOf(loaded, { options: '-c lock_timeout=1s' }) };
    const lock = await lockTraffic(at.database);
    try {
      const started = Date.now();
      const result = await runCli(['traffic', ...auth(), '--date', day(2), '-o', at.url]);
      const seconds = (Date.now() - started) / 1000;
      expect(result.code, result.stderr).toBe(7);
      const errors = result.stderr.split('\n').filter((line) => line.startsWith('error: '));
      expect(errors[0]).toMatch(
        new RegExp(
          `^error: traffic ${day(2)}: cannot load ${SCHEMA}\\.traffic ${day(2)} into postgresql://\\S+: a lock on ${SCHEMA}\\.traffic was not granted within lock_timeout \\(1 s\\): another session holds it .*\\(55P03: canceling statement due to lock timeout\\)$`,
        ),
      );
      // The 1 s bound, a process's start and the sandbox's answers on a busy machine; the lock itself is held until
      // the test releases it, and the default bound would be 60 s.
      expect(seconds).toBeLessThan(20);
    } finally {
      await lock.release();
    }
  });

  it('SIGTERM while the run waits on that lock: the statement is cancelled and the run exits 143 within 5 s', async () => {
    const at = { database: loaded, url: urlOf(loaded) };
    const lock = await lockTraffic(at.database);
    try {
      const run = startCli(['traffic', ...auth(), '--date', day(2), '-o', at.url]);
      await waitUntil(async () => (await waitingOnLock(at.database)).length > 0, 'the run to wait on the lock');
      const signalled = Date.now();
      run.kill('SIGTERM');
      const result = await run.done;
      expect([result.code, result.stderr]).toEqual([143, expect.stringContaining('interrupted by SIGTERM')]);
      expect(Date.now() - signalled).toBeLessThan(5000);
      // Its statement no longer waits, and its run lock is gone with it, the table lock still held by the other.
      expect(await waitingOnLock(at.database)).toEqual([]);
      expect(await runLocks(at.database)).toBe(0);
    } finally {
      await lock.release();
    }
  });

  it('SIGKILL while the run waits on that lock: the server ends its session, and its run lock, within seconds', async () => {
    const at = { database: loaded, url: urlOf(loaded) };
    const lock = await lockTraffic(at.database);
    try {
      const run = startCli(['traffic', ...auth(), '--date', day(2), '-o', at.url]);
      await waitUntil(async () => (await waitingOnLock(at.database)).length > 0, 'the run to wait on the lock');
      expect(await runLocks(at.database)).toBe(1);
      run.kill('SIGKILL');
      expect((await run.done).signal).toBe('SIGKILL');
      // The server notices the client gone although its session only waits (client_connection_check_interval).
      await waitUntil(async () => (await runLocks(at.database)) === 0, 'the dead run to lose its lock', 10_000);
      expect(await waitingOnLock(at.database)).toEqual([]);
    } finally {
      await lock.release();
    }
  });

  describe('through a network path', () => {
    let proxy: TcpProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      sandbox().setFaults({});
    });

    /** A run of five days through a proxy that freezes once two units are loaded (both its connections open by then). */
    async function frozenMidRun(params: string): Promise<ReturnType<typeof startCli>> {
      const database = await freshDatabase();
      const path = await startTcpProxy({ host: server.host, port: server.port });
      proxy = path;
      const url = `postgresql://postgres@127.0.0.1:${path.port}/${database}?schema=${SCHEMA}&connect_timeout=2${params}`;
      sandbox().setFaults({ latencyMs: 40 });
      const run = startCli(['all', ...auth(), '--from', day(6), '--to', day(2), '-o', url, '--concurrency', '1']);
      await waitUntil(async () => {
        // The run makes the table first: until then, nothing loaded.
        const rows = await server
          .query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCHEMA}.area_metrics_units`, [], database)
          .catch(() => []);
        return Number(rows[0]?.n ?? 0) >= 2;
      }, 'two units loaded through the proxy');
      // Both of the run's connections were open before its first unit loaded: the freeze meets no connection opening.
      const sessions = await server.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'area-metrics all'", [
        database,
      ]);
      expect(sessions).toHaveLength(2);
      path.freeze();
      return run;
    }

    it('that freezes in the middle of a run: exit 7 once the server is silent past the answer bound', async () => {
      // statement_timeout 1 s: the client gives up on a silent server after 2 s.
      const run = await frozenMidRun('&options=-c%20statement_timeout%3D1s');
      const frozen = Date.now();
      const result = await run.done;
      expect(result.code, result.stderr).toBe(7);
      expect(result.stderr).toMatch(/error: .*no answer from the server in 2 s \(statement_timeout 1 s and a margin\)/);
      // Each statement still to run meets the 2 s bound, or the connection already dropped: seconds, not the default's
      // two minutes. Alone it takes about 2.5 s; a busy machine's margin on top.
      expect(Date.now() - frozen, result.stderr).toBeLessThan(15_000);
    });

    it('that freezes, then SIGTERM: exit 143 within 5 s, though no statement can be cancelled through it', async () => {
      // The default bounds: only the signal ends this run before its 2-minute answer bound.
      const run = await frozenMidRun('');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const signalled = Date.now();
      run.kill('SIGTERM');
      const result = await run.done;
      expect(result.code, result.stderr).toBe(143);
      expect(Date.now() - signalled).toBeLessThan(5000);
    });
  });
});
