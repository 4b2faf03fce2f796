import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BOUNDS } from '../../../src/destination/postgres/bounds.js';
import { Session } from '../../../src/destination/postgres/session.js';
import { parsePostgresUrl, resolveTarget } from '../../../src/destination/postgres/url.js';
import { InterruptedError, OutputError, UsageError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log/logger.js';
import { startPostgres, warnIfPostgresMissing, type TestPostgres } from '../../helpers/postgres.js';
import { startTcpProxy } from '../../helpers/tcp-proxy.js';

/**
 * A run's connection against a real server: the bounds in force in its session (ours by default, a tighter one of
 * the role's kept, the URL's `options` or `PGOPTIONS` winning), its application name, a lock wait ended by its bound
 * with the table named, and SIGTERM cancelling the statement in flight.
 */
const skip = warnIfPostgresMissing('the PostgreSQL session tests');
const DATABASE = 'sessions';
const PASSWORD = 'Session-Test-Pw-4';

let server: TestPostgres;
const opened: Session[] = [];

/** A session of `command` on the test database as `user`, with `params` in its URL and `env` as its environment. */
function sessionOf(
  options: {
    user?: string;
    params?: Record<string, string>;
    env?: NodeJS.ProcessEnv;
    signal?: AbortSignal;
    port?: number;
    retries?: number;
  } = {},
) {
  const direct = server.url({ database: DATABASE, ...(options.user ? { user: options.user } : {}), params: options.params ?? {} });
  const text = options.port === undefined ? direct : direct.replace(`:${server.port}/`, `:${options.port}/`);
  const url = parsePostgresUrl(text, '-o');
  const env = { PGPASSWORD: PASSWORD, ...options.env };
  const session = new Session(url, resolveTarget(url, env, 'traffic'), {
    env,
    retries: options.retries ?? 0,
    logger: silentLogger,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  opened.push(session);
  return session;
}

/** What the session's own SHOW says of each setting the run bounds. */
async function shown(session: Session, names: readonly string[]): Promise<Record<string, string>> {
  return session.use('cannot read the settings of', async (client) => {
    const entries: [string, string][] = [];
    for (const name of names) entries.push([name, (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]?.[name] ?? '']);
    return Object.fromEntries(entries);
  });
}

describe.skipIf(skip)('a PostgreSQL session', () => {
  let serverVersion = 0;
  beforeAll(async () => {
    server = await startPostgres();
    await server.query(`CREATE DATABASE ${DATABASE}`);
    await server.query(`CREATE ROLE tight LOGIN PASSWORD '${PASSWORD}'; CREATE ROLE loose LOGIN PASSWORD '${PASSWORD}'`);
    await server.query("ALTER ROLE tight SET lock_timeout = '2s'; ALTER ROLE loose SET statement_timeout = '10min'");
    serverVersion = Number((await server.query<{ v: string }>("SELECT current_setting('server_version_num') AS v"))[0]?.v);
  });
  afterAll(async () => {
    await Promise.all(opened.map((session) => session.close()));
    await server?.stop();
  });

  it('runs under our bounds by default, keeps a tighter one of the role, caps a looser one, and says who it is', async () => {
    const names = ['lock_timeout', 'statement_timeout', 'idle_in_transaction_session_timeout', 'tcp_keepalives_count', 'application_name'];
    expect(await shown(sessionOf(), names)).toEqual({
      lock_timeout: '1min',
      statement_timeout: '110s',
      idle_in_transaction_session_timeout: '1min',
      // Over a unix socket keepalives read 0; over TCP, ours.
      tcp_keepalives_count: String(DEFAULT_BOUNDS.tcp_keepalives_count),
      application_name: 'area-metrics traffic',
    });
    if (serverVersion >= 140000)
      expect(await shown(sessionOf(), ['client_connection_check_interval'])).toEqual({ client_connection_check_interval: '2s' });
    expect(await shown(sessionOf({ user: 'tight' }), ['lock_timeout'])).toEqual({ lock_timeout: '2s' });
    expect(await shown(sessionOf({ user: 'loose' }), ['statement_timeout'])).toEqual({ statement_timeout: '110s' });
  });

  it("takes the URL's options or PGOPTIONS over our bounds, 0 included; the URL's replace PGOPTIONS whole", async () => {
    const names = ['lock_timeout', 'statement_timeout'];
    const fromUrl = sessionOf({ params: { options: '-c lock_timeout=5min -c statement_timeout=0' } });
    expect(await shown(fromUrl, names)).toEqual({ lock_timeout: '5min', statement_timeout: '0' });
    const fromEnv = sessionOf({ env: { PGOPTIONS: '-c statement_timeout=3min' } });
    expect(await shown(fromEnv, names)).toEqual({ lock_timeout: '1min', statement_timeout: '3min' });
    const both = sessionOf({ params: { options: '-c lock_timeout=7s' }, env: { PGOPTIONS: '-c statement_timeout=3min' } });
    expect(await shown(both, names)).toEqual({ lock_timeout: '7s', statement_timeout: '110s' });
    // A setting the server does not know is a usage error, in the server's words.
    const wrong = sessionOf({ params: { options: '-c lock_timout=5s' } }).use('cannot prepare', () => Promise.resolve());
    await expect(wrong).rejects.toThrow(UsageError);
    await expect(wrong).rejects.toThrow(/the server refused a setting of the URL's options or PGOPTIONS \(42704: .*lock_timout/);
  });

  it('a lock not granted within lock_timeout: exit 7 naming the table and the bound', async () => {
    await server.query('CREATE TABLE IF NOT EXISTS public.held (n int)', [], DATABASE);
    const holder = await server.connect(DATABASE);
    try {
      await holder.query('BEGIN; LOCK TABLE public.held IN ACCESS EXCLUSIVE MODE');
      const session = sessionOf({ params: { options: '-c lock_timeout=300' } });
      const waited = session.use('cannot load public.held into', (client) => client.query('DELETE FROM "public"."held"'));
      await expect(waited).rejects.toThrow(OutputError);
      await expect(waited).rejects.toThrow(
        /^cannot load public\.held into postgresql:\/\/\S+: a lock on public\.held was not granted within lock_timeout \(300 ms\): another session holds it .*\(55P03: canceling statement due to lock timeout\)$/,
      );
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('SIGTERM while a statement waits: the statement is cancelled on the server and the caller gets the interrupt', async () => {
    await server.query('CREATE TABLE IF NOT EXISTS public.waited (n int)', [], DATABASE);
    const holder = await server.connect(DATABASE);
    const controller = new AbortController();
    try {
      await holder.query('BEGIN; LOCK TABLE public.waited IN ACCESS EXCLUSIVE MODE');
      const session = sessionOf({ signal: controller.signal });
      const pid = await session.use(
        'cannot read',
        async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid,
      );
      const waiting = session.use('cannot load public.waited into', (client) => client.query('DELETE FROM "public"."waited"'));
      const waitsOnLock = async () =>
        (await server.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = $2', [pid, 'Lock'])).length === 1;
      for (let tries = 0; !(await waitsOnLock()); tries++) {
        if (tries > 100) throw new Error('the session never waited on the lock');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const interrupt = new InterruptedError('SIGTERM');
      const started = Date.now();
      controller.abort(interrupt);
      await expect(waiting).rejects.toBe(interrupt);
      // Cancelled, not left waiting: the server's session is idle again, well before the grace drops the connection.
      expect(Date.now() - started).toBeLessThan(2000);
      expect(await waitsOnLock()).toBe(false);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('a path that freezes while the connection opens: the attempt ends at connect_timeout, not at the default answer bound', async () => {
    const path = await startTcpProxy({ host: server.host, port: server.port });
    try {
      // The session's first statement after the handshake asks which bounds are in force: the path freezes right there.
      path.freezeWhen((bytes) => bytes.includes('pg_settings'));
      const session = sessionOf({ port: path.port, params: { connect_timeout: '1' } });
      const started = Date.now();
      const opening = session.use('cannot prepare', () => Promise.resolve());
      await expect(opening).rejects.toThrow(
        /^cannot prepare postgresql:\/\/\S+: cannot reach the server; .*\(no answer: connection timeout: no answer in 1 s while opening the session\)$/,
      );
      // One attempt (retries 0) of 1 s, and a margin a busy machine keeps; the default answer bound would be 121 s.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await path.close();
    }
  });

  it('an attempt that froze while opening spoils nothing: the next attempt opens a session that goes on working', async () => {
    const path = await startTcpProxy({ host: server.host, port: server.port });
    try {
      const frozen = { connections: 0 };
      // Only the first connection's opening freezes.
      path.freezeWhen((bytes) => bytes.includes('pg_settings') && ++frozen.connections === 1);
      const session = sessionOf({ port: path.port, params: { connect_timeout: '1' }, retries: 1 });
      const one = async () => (await session.use('cannot read', (client) => client.query<{ one: number }>('SELECT 1 AS one'))).rows;
      expect(await one()).toEqual([{ one: 1 }]);
      expect(await one()).toEqual([{ one: 1 }]);
      expect(frozen.connections).toBe(2);
    } finally {
      await path.close();
    }
  });
});
