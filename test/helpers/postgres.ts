import { tmpdir } from 'node:os';
import pg from 'pg';
import { postgresBin, startCluster, SUPERUSER } from '../../scripts/postgres-cluster.mjs';
import { useStarted } from './use-started.js';

export { postgresOwner } from '../../scripts/postgres-cluster.mjs';

/**
 * Call at the top of a PostgreSQL test file: whether to skip its tests, with a loud warning. Never in CI, which
 * installs postgresql: there a missing server makes the tests run and fail.
 */
export function warnIfPostgresMissing(what: string): boolean {
  if (postgresBin || process.env.CI) return false;
  console.warn(`\n!!! SKIPPING ${what}: PostgreSQL is not installed. Install it (apt-get install -y postgresql) to run these tests. !!!\n`);
  return true;
}

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

/** A throwaway cluster (`startCluster`), with the superuser's client to set it up and read it back. */
export async function startPostgres(options: { readonly tls?: boolean } = {}): Promise<TestPostgres> {
  // The run's temp folder (TMPDIR) keeps one initdb for every file's cluster to copy.
  const cluster = await startCluster({ ...options, templates: tmpdir() });
  const { host, port } = cluster;
  const connect = async (database = 'postgres'): Promise<pg.Client> => {
    const client = new pg.Client({ host, port, user: SUPERUSER, database });
    await client.connect();
    return client;
  };
  return {
    host,
    port,
    certificate: cluster.certificate,
    url: ({ user = SUPERUSER, database = 'postgres', params = {} } = {}) => {
      const query = new URLSearchParams(params).toString();
      return `postgresql://${user}@${host}:${port}/${database}${query === '' ? '' : `?${query}`}`;
    },
    query: async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = [], database?: string) => {
      const client = await connect(database);
      try {
        return (await client.query<T>(sql, values)).rows;
      } finally {
        await client.end();
      }
    },
    connect,
    stop: cluster.stop,
  };
}

/** The cluster of a test file (or a describe block), started before its tests and stopped after them. */
export function usePostgres(options: { readonly tls?: boolean } = {}): TestPostgres & (() => TestPostgres) {
  // initdb and a server's start: seconds on a busy machine.
  return useStarted(
    'the PostgreSQL cluster',
    () => startPostgres(options),
    (server) => server.stop(),
    60_000,
  );
}
