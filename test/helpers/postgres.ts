import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { closedPort } from './ports.js';

const run = promisify(execFile);

/**
 * The folder of initdb, pg_ctl and postgres: the newest /usr/lib/postgresql/<version>/bin (where the Debian package
 * puts them, off PATH), else wherever PATH has initdb; undefined when PostgreSQL is not installed.
 */
export const postgresBin: string | undefined = (() => {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest !== undefined) return join(root, newest, 'bin');
  for (const folder of (process.env.PATH ?? '').split(':')) if (folder && existsSync(join(folder, 'initdb'))) return folder;
  return undefined;
})();

/**
 * Call at the top of a PostgreSQL test file: whether to skip its tests, with a loud warning. Never in CI, which
 * installs postgresql: there a missing server makes the tests run and fail.
 */
export function warnIfPostgresMissing(what: string): boolean {
  if (postgresBin || process.env.CI) return false;
  console.warn(`\n!!! SKIPPING ${what}: PostgreSQL is not installed. Install it (apt-get install -y postgresql) to run these tests. !!!\n`);
  return true;
}

/** The server's superuser, trusted over loopback; the roles the tests make log in with passwords. */
export const SUPERUSER = 'postgres';

export interface TestPostgres {
  readonly host: string;
  readonly port: number;
  /** With `tls`: the server's self-signed certificate (for 127.0.0.1 and localhost), to name as `sslrootcert`. */
  readonly certificate: string | undefined;
  /** A `postgresql://` URL for `user` (the superuser by default) and `database`, with `params` as its query. */
  url(options?: { user?: string; database?: string; params?: Record<string, string> }): string;
  /** One statement as the superuser, on `database` (default `postgres`). */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values?: unknown[], database?: string): Promise<T[]>;
  /** A connection of the superuser's, for a test that holds a lock or a transaction open. */
  connect(database?: string): Promise<pg.Client>;
  /** Stops the server at once and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** Root may not run PostgreSQL: as root, its commands run as the `postgres` system user, in a folder it owns. */
const asRoot = userInfo().uid === 0;

function command(binary: string, args: readonly string[]): [string, string[]] {
  const path = join(postgresBin ?? '', binary);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, [...args]];
}

/**
 * A throwaway cluster: initdb into a temp folder, then pg_ctl start on a free loopback port with its unix socket in
 * that folder, durability off (a test's data need not survive a power cut). Loopback connections: the superuser
 * trusted, every other role by SCRAM password. With `tls`, the server offers TLS with a self-signed certificate, and
 * the role `tls_only` is let in over TLS alone.
 */
export async function startPostgres(options: { readonly tls?: boolean } = {}): Promise<TestPostgres> {
  if (!postgresBin) throw new Error('PostgreSQL is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'area-metrics-pg-'));
  chmodSync(dir, 0o755);
  const owner = await postgresOwner();
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  await run(
    ...command('initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C']),
  );
  const hba = [
    `local all ${SUPERUSER} trust`,
    `host all ${SUPERUSER} 127.0.0.1/32 trust`,
    ...(options.tls ? ['hostnossl all tls_only 127.0.0.1/32 reject'] : []),
    'host all all 127.0.0.1/32 scram-sha-256',
  ];
  writeFileSync(join(data, 'pg_hba.conf'), `${hba.join('\n')}\n`);
  const certificate = options.tls ? join(dir, 'server.crt') : undefined;
  if (certificate !== undefined) {
    const key = join(data, 'server.key');
    const served = join(data, 'server.crt');
    await run('openssl', [
      ...['req', '-new', '-x509', '-days', '2', '-nodes', '-subj', '/CN=localhost'],
      ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', served],
    ]);
    writeFileSync(certificate, readFileSync(served));
    chmodSync(key, 0o600);
    if (owner !== undefined) for (const file of [key, served]) chownSync(file, owner.uid, owner.gid);
  }
  const port = await closedPort();
  const settings = [
    `-c port=${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    "-c password_encryption='scram-sha-256'",
    ...(options.tls ? ['-c ssl=on'] : []),
  ];
  await run(...command('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', settings.join(' '), '-w', '-s', 'start']));
  const host = '127.0.0.1';
  const clientFor = (database = 'postgres') => new pg.Client({ host, port, user: SUPERUSER, database });
  let stopped = false;
  return {
    host,
    port,
    certificate,
    url: ({ user = SUPERUSER, database = 'postgres', params = {} } = {}) => {
      const query = new URLSearchParams(params).toString();
      return `postgresql://${user}@${host}:${port}/${database}${query === '' ? '' : `?${query}`}`;
    },
    query: async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = [], database?: string) => {
      const client = clientFor(database);
      await client.connect();
      try {
        return (await client.query<T>(sql, values)).rows;
      } finally {
        await client.end();
      }
    },
    connect: async (database) => {
      const client = clientFor(database);
      await client.connect();
      return client;
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await run(...command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-s', 'stop'])).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `postgres` system user's ids, as root gives it a folder (a tablespace on a test's own disk). */
export async function postgresOwner(): Promise<{ uid: number; gid: number } | undefined> {
  if (!asRoot) return undefined;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}
