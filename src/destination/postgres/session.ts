import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, ClientConfig } from 'pg';
import { AuthError, InterruptedError, UnavailableError, UsageError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import {
  BOUND_NAMES,
  CLIENT_KEEPALIVE_MS,
  DEFAULT_SESSION_BOUNDS,
  duration,
  settleBounds,
  type ServerSetting,
  type SessionBounds,
} from './bounds.js';
import { requestCancel, type BackendKey } from './cancel.js';
import { boundExceeded, connectionLost, databaseError, isRetryable, noAnswer, refusedOptions } from './failures.js';
import { passwordFilePath, passwordFromFile } from './pgpass.js';
import type { PostgresTarget, PostgresUrl } from './url.js';

/** What opening a session needs besides the target: the environment (passwords), the retry budget, the log. */
export interface SessionOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Connection attempts after the first, with backoff, before the server counts as unreachable (exit 4). */
  readonly retries: number;
  readonly logger: Logger;
  /** The command that opens it, named in the session's application_name. */
  readonly command?: string;
  /** SIGINT or SIGTERM: the statement in flight is cancelled, and the run has a few seconds to record its end. */
  readonly signal?: AbortSignal;
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

/** After SIGINT or SIGTERM, how long the run may still use a connection (to record how it ended) before it is dropped. */
const GRACE_MS = 2000;

/** How long closing waits for the server's goodbye before it drops the connection (a frozen path never says it). */
const CLOSE_MS = 1000;

/** An open connection: the client, its socket (watched for silence), the bounds in force, the statement last sent. */
interface Open {
  readonly client: Client;
  readonly socket: Socket;
  readonly key: BackendKey;
  readonly bounds: SessionBounds;
  readonly statement: { text: string };
}

/** Why the session dropped its connection itself: a statement met silence for `silentMs`, under `bounds`. */
class Silence extends Error {
  constructor(
    readonly silentMs: number,
    readonly bounds: SessionBounds,
  ) {
    super(`no answer in ${silentMs} ms`);
  }
}

/**
 * One connection to the database, used by one caller at a time: its statements go through it in order (a unit's
 * transaction, the state, the manifest). The run's first one holds the run's lock for as long as it lives; a second
 * loads units beside it. `pg` is loaded only here, when a PostgreSQL output is used.
 *
 * Every wait is bounded: the server's own (lock_timeout, statement_timeout... see bounds.ts) set when it opens, and
 * ours, a statement whose connection stays silent past the answer bound is dropped. SIGINT or SIGTERM cancels the
 * statement in flight at once, and drops the connection a few seconds later.
 */
export class Session {
  private open: Open | undefined;
  private connecting: Promise<Open> | undefined;
  /** The client of a connection attempt under way, dropped if the run is interrupted meanwhile. */
  private attempt: Client | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Callers waiting for the connection or using it. */
  private waiting = 0;
  /** Whether a caller's work runs on the connection now. */
  private working = false;
  /** The connection's failure once it is lost: every later statement fails with it at once. */
  private lost: Error | undefined;

  constructor(
    private readonly url: PostgresUrl,
    readonly target: PostgresTarget,
    private readonly options: SessionOptions,
  ) {
    options.signal?.addEventListener('abort', () => this.interrupted(), { once: true });
  }

  /** How many callers wait for the connection or use it: a load goes to the least busy of the run's connections. */
  get busy(): number {
    return this.waiting;
  }

  /**
   * Runs `work` with the connection once every earlier caller is done; opens it first if need be. A connection lost
   * once open (the server restarted, the session terminated) is a write refused, as a disk gone away is for files:
   * the transaction in flight is rolled back by the server, and the run stops rather than fail each unit in turn.
   */
  use<T>(what: string, work: (client: Client) => Promise<T>): Promise<T> {
    this.waiting++;
    const run = this.queue.then(async () => {
      // The connection `work` got: a failure before it is one of connecting.
      const got: { open?: Open } = {};
      try {
        if (this.lost !== undefined) throw this.lost;
        const open = await this.connected();
        got.open = open;
        return await this.watched(open, open.bounds.answerMs, () => work(open.client));
      } catch (error) {
        throw this.failure(error, what, got.open);
      }
    });
    this.queue = run.catch(() => {});
    void this.queue.then(() => this.waiting--);
    return run;
  }

  async close(): Promise<void> {
    const open = this.open ?? (await this.connecting?.catch(() => undefined));
    this.open = undefined;
    this.connecting = undefined;
    if (open === undefined) return;
    await Promise.race([open.client.end().catch(() => {}), sleep(CLOSE_MS, undefined, { ref: false })]);
    open.socket.destroy();
  }

  /** What a failure means for the run (see `use`): `open` is the connection `work` ran on, if it got that far. */
  private failure(error: unknown, what: string, open: Open | undefined): unknown {
    const { signal } = this.options;
    const where = this.target.shown;
    if (signal?.aborted) return signal.reason instanceof InterruptedError ? signal.reason : new InterruptedError('SIGINT');
    const bounds = open?.bounds ?? DEFAULT_SESSION_BOUNDS;
    if (this.lost instanceof Silence) return noAnswer(what, where, this.lost.silentMs, this.lost.bounds);
    if (open === undefined && this.lost === undefined)
      return refusedOptions(error, where, this.target.options) ?? databaseError(error, what, where);
    const bounded = open === undefined ? undefined : boundExceeded(error, what, where, bounds, open.statement.text);
    if (bounded !== undefined) return bounded;
    const typed = databaseError(error, what, where);
    // Lost while `work` ran, pg fails the statement in flight with words of its own ("not queryable"): the loss
    // it reported is the cause.
    if (this.lost === undefined && !(typed instanceof UnavailableError)) return typed;
    this.lost ??= error instanceof Error ? error : new Error(String(error));
    return connectionLost(this.lost, what, where);
  }

  /**
   * `work` on the connection, which is dropped if it stays silent for `answerMs` meanwhile: for good once open (the
   * session's later callers fail at once, saying why), as a failed attempt while it opens (it may be tried again).
   */
  private async watched<T>(open: Open, answerMs: number | undefined, work: () => Promise<T>, opening = false): Promise<T> {
    const silence = { met: false };
    const silent = (): void => {
      silence.met = true;
      if (!opening) this.lost ??= new Silence(answerMs ?? 0, open.bounds);
      this.drop(open);
    };
    if (answerMs !== undefined) open.socket.setTimeout(answerMs, silent);
    this.working = true;
    try {
      return await work();
    } catch (error) {
      // Silent while opening: an attempt timed out, as a connect timeout is, and retried like one.
      if (opening && silence.met)
        throw new Error(`connection timeout: no answer in ${duration(answerMs ?? 0)} while opening the session`, { cause: error });
      throw error;
    } finally {
      this.working = false;
      open.socket.setTimeout(0);
      open.socket.off('timeout', silent);
    }
  }

  /** Cancels the statement in flight, if any (the server would not notice a closed connection while it waits), and closes. */
  private drop(open: Open): void {
    if (this.working) void requestCancel(this.target, open.key);
    open.socket.destroy();
  }

  /** SIGINT or SIGTERM: the statement in flight cancelled now; after the grace, the connection (or its attempt) dropped. */
  private interrupted(): void {
    if (this.open !== undefined && this.working) void requestCancel(this.target, this.open.key);
    setTimeout(() => {
      const reason: unknown = this.options.signal?.reason;
      this.lost ??= reason instanceof Error ? reason : new InterruptedError('SIGINT');
      if (this.open !== undefined) this.drop(this.open);
      this.attempt?.connection.stream.destroy();
    }, GRACE_MS).unref();
  }

  private connected(): Promise<Open> {
    if (this.open !== undefined) return Promise.resolve(this.open);
    this.connecting ??= this.connectWithRetries().then((open) => (this.open = open));
    return this.connecting;
  }

  private async connectWithRetries(): Promise<Open> {
    const { retries, logger, signal } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.connect();
      } catch (error) {
        if (!isRetryable(error) || attempt >= retries || signal?.aborted) throw error;
        const wait = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
        logger.warn(`cannot connect to ${this.target.shown} (${(error as Error).message}); trying again in ${(wait / 1000).toFixed(1)} s`);
        await sleep(wait, undefined, signal ? { signal } : {}).catch(() => {});
      }
    }
  }

  private async connect(): Promise<Open> {
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
      ...(target.options === undefined ? {} : { options: target.options }),
      keepAlive: true,
      keepAliveInitialDelayMillis: CLIENT_KEEPALIVE_MS,
    });
    const open = async (ssl: false | ConnectionOptions): Promise<Open> => {
      const client = new pg.Client(config(ssl));
      const attempt = { opened: false };
      // A connection lost between statements is an 'error' event: kept, and thrown by the next statement. One lost
      // while opening fails that attempt alone (its promise says so), and the next attempt starts clean.
      client.on('error', (error) => {
        if (attempt.opened) this.lost ??= error;
      });
      this.attempt = client;
      try {
        await client.connect();
        const statement = { text: '' };
        trackStatements(client, statement);
        const socket = client.connection.stream as Socket;
        const opened = { client, socket, key: backendKeyOf(client), statement, bounds: DEFAULT_SESSION_BOUNDS };
        // Learning the bounds in force is part of opening, bounded as connecting is: a path that freezes right after
        // the handshake ends the attempt at connect_timeout, not at the two minutes of our default answer bound.
        const bounds = await this.watched(opened, target.connectTimeoutMs, () => boundSession(client), true);
        attempt.opened = true;
        return { ...opened, bounds };
      } catch (error) {
        await Promise.race([client.end().catch(() => {}), sleep(CLOSE_MS, undefined, { ref: false })]);
        client.connection.stream.destroy();
        throw error;
      } finally {
        this.attempt = undefined;
      }
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

/** The session's bounds set where the server's are looser than ours (see `settleBounds`); returns those in force. */
async function boundSession(client: Client): Promise<SessionBounds> {
  const { rows } = await client.query<ServerSetting>('SELECT name, setting, source FROM pg_settings WHERE name = ANY($1)', [BOUND_NAMES]);
  const { toSet, bounds } = settleBounds(rows);
  if (toSet.length > 0)
    await client.query('SELECT set_config(name, value, false) FROM unnest($1::text[], $2::text[]) AS bound(name, value)', [
      toSet.map((bound) => bound.name),
      toSet.map((bound) => bound.value),
    ]);
  return bounds;
}

/** pg keeps the backend's key, which a cancel request names, without declaring it. */
function backendKeyOf(client: Client): BackendKey {
  const { processID, secretKey } = client as unknown as { processID: number; secretKey: number };
  return { processID, secretKey };
}

/** Keeps the text of each statement `client` is given, so that a lock it waited for in vain can be named. */
function trackStatements(client: Client, last: { text: string }): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  Object.assign(client, {
    query: (...args: unknown[]): unknown => {
      const [first] = args;
      const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
      last.text = typeof text === 'string' ? text : '';
      return query(...args);
    },
  });
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
