import { readFile } from 'node:fs/promises';
import type { ConnectionOptions } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, ClientConfig } from 'pg';
import { AuthError, UnavailableError, UsageError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { connectionLost, databaseError, isRetryable } from './failures.js';
import { passwordFilePath, passwordFromFile } from './pgpass.js';
import type { PostgresTarget, PostgresUrl } from './url.js';

/** What opening a session needs besides the target: the environment (passwords), the retry budget, the log. */
export interface SessionOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Connection attempts after the first, with backoff, before the server counts as unreachable (exit 4). */
  readonly retries: number;
  readonly logger: Logger;
}

/** The first wait between connection attempts; it doubles up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 4000;

/** pg's words when `sslmode=prefer` meets a server without TLS: libpq then connects in plain text. */
const NO_TLS = /does not support SSL/i;

/** The TLS options of an sslmode, as libpq means them (`require` encrypts without checking; `verify-*` check). */
async function tlsOf(target: PostgresTarget): Promise<false | ConnectionOptions> {
  if (target.sslmode === 'disable' || target.sslmode === 'allow') return false;
  let ca: string | undefined;
  if (target.sslrootcert !== undefined) {
    try {
      ca = await readFile(target.sslrootcert, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read sslrootcert ${target.sslrootcert}: ${(error as Error).message}`);
    }
  }
  const withCa = ca === undefined ? {} : { ca };
  const verifyCa = { ...withCa, checkServerIdentity: () => undefined };
  if (target.sslmode === 'verify-full') return withCa;
  if (target.sslmode === 'verify-ca') return verifyCa;
  // require (and prefer) with a root certificate check it as verify-ca does, as libpq does.
  return ca === undefined ? { rejectUnauthorized: false } : verifyCa;
}

/** The password as libpq finds it: in the URL, `PGPASSWORD`, or the password file (`PGPASSFILE`, `~/.pgpass`). */
async function passwordOf(url: PostgresUrl, target: PostgresTarget, env: NodeJS.ProcessEnv): Promise<string> {
  if (url.password !== undefined) return url.password;
  if (env.PGPASSWORD) return env.PGPASSWORD;
  const file = passwordFilePath(env);
  const found = file === undefined ? undefined : await passwordFromFile(file, target);
  if (found !== undefined) return found;
  throw new AuthError(
    `${target.shown}: the server asks for a password and none is set: set PGPASSWORD or add a line to ${file ?? '~/.pgpass'}`,
  );
}

/**
 * One connection to the database, used by one caller at a time: its statements go through it in order (a unit's
 * transaction, the state, the manifest). The run's first one holds the run's lock for as long as it lives; a second
 * loads units beside it. `pg` is loaded only here, when a PostgreSQL output is used.
 */
export class Session {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Callers waiting for the connection or using it. */
  private waiting = 0;
  /** The connection's failure once it is lost: every later statement fails with it at once. */
  private lost: Error | undefined;

  constructor(
    private readonly url: PostgresUrl,
    readonly target: PostgresTarget,
    private readonly options: SessionOptions,
  ) {}

  /**
   * Runs `work` with the connection once every earlier caller is done; opens it first if need be. A connection lost
   * once open (the server restarted, the session terminated) is a write refused, as a disk gone away is for files:
   * the transaction in flight is rolled back by the server, and the run stops rather than fail each unit in turn.
   */
  /** How many callers wait for the connection or use it: a load goes to the least busy of the run's connections. */
  get busy(): number {
    return this.waiting;
  }

  use<T>(what: string, work: (client: Client) => Promise<T>): Promise<T> {
    this.waiting++;
    const run = this.queue.then(async () => {
      const open = this.client !== undefined;
      try {
        if (this.lost !== undefined) throw this.lost;
        return await work(await this.connected());
      } catch (error) {
        const typed = databaseError(error, what, this.target.shown);
        // Lost while `work` ran, pg fails the statement in flight with words of its own ("not queryable"): the loss
        // it reported is the cause.
        if (!open || (this.lost === undefined && !(typed instanceof UnavailableError))) throw typed;
        this.lost ??= error instanceof Error ? error : new Error(String(error));
        throw connectionLost(this.lost, what, this.target.shown);
      }
    });
    this.queue = run.catch(() => {});
    void this.queue.then(() => this.waiting--);
    return run;
  }

  async close(): Promise<void> {
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    this.connecting = undefined;
    await client?.end().catch(() => {});
  }

  private connected(): Promise<Client> {
    if (this.client !== undefined) return Promise.resolve(this.client);
    this.connecting ??= this.connectWithRetries().then((client) => (this.client = client));
    return this.connecting;
  }

  private async connectWithRetries(): Promise<Client> {
    const { retries, logger } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.connect();
      } catch (error) {
        if (!isRetryable(error) || attempt >= retries) throw error;
        const wait = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
        logger.warn(`cannot connect to ${this.target.shown} (${(error as Error).message}); trying again in ${(wait / 1000).toFixed(1)} s`);
        await sleep(wait);
      }
    }
  }

  private async connect(): Promise<Client> {
    const { default: pg } = await import('pg');
    const { target } = this;
    const tls = await tlsOf(target);
    const config = (ssl: false | ConnectionOptions): ClientConfig => ({
      host: target.host,
      port: target.port,
      database: target.database,
      user: target.user,
      // Asked for only when the server wants one; pg's own password file reading is deprecated, so it is ours.
      password: () => passwordOf(this.url, target, this.options.env),
      ssl,
      connectionTimeoutMillis: target.connectTimeoutMs,
      application_name: target.applicationName,
    });
    const open = async (ssl: false | ConnectionOptions): Promise<Client> => {
      const client = new pg.Client(config(ssl));
      // A connection lost between statements is an 'error' event: kept, and thrown by the next statement.
      client.on('error', (error) => {
        this.lost = error;
      });
      try {
        await client.connect();
      } catch (error) {
        await client.end().catch(() => {});
        throw error;
      }
      return client;
    };
    try {
      return await open(tls);
    } catch (error) {
      if (!NO_TLS.test((error as Error).message)) throw error;
      // sslmode=prefer: TLS where the server offers it, plain text where it does not, as libpq does.
      if (target.sslmode === 'prefer') return open(false);
      throw new UnavailableError(
        `cannot connect to ${target.shown}: the server does not offer TLS, which sslmode=${target.sslmode} asks for; turn on ssl on the server, or use sslmode=prefer`,
      );
    }
  }
}

/** `work` as one transaction: committed when it returns, rolled back when it throws (its error rethrown). */
export async function inTransaction<T>(client: Client, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
