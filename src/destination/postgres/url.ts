import { userInfo } from 'node:os';
import { UsageError } from '../../errors.js';

/** The schemes `-o` takes for a PostgreSQL database, as libpq does. */
const SCHEMES = ['postgresql:', 'postgres:'];

/** The schema the tables go in when the URL names none. */
export const DEFAULT_SCHEMA = 'public';

/** libpq's `sslmode` values. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The query parameters the URL may carry: libpq's that apply here, and `schema`, ours. */
const PARAMETERS = ['schema', 'sslmode', 'sslrootcert', 'host', 'port', 'user', 'dbname', 'connect_timeout', 'application_name', 'options'];

/** A PostgreSQL `-o` as written: what it says, nothing filled in yet (the environment fills the rest when it opens). */
export interface PostgresUrl {
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
  readonly user?: string;
  /** Accepted, as libpq does, though a password belongs in `PGPASSWORD` or a password file; never printed. */
  readonly password?: string;
  readonly schema?: string;
  readonly sslmode?: SslMode;
  readonly sslrootcert?: string;
  readonly connectTimeoutSeconds?: number;
  readonly applicationName?: string;
  /** Server settings for the session, as libpq sends them (`-c lock_timeout=5s -c statement_timeout=10min`). */
  readonly options?: string;
  /** The URL without its password, for messages. */
  readonly shown: string;
}

export function isPostgresUrl(text: string): boolean {
  return SCHEMES.some((scheme) => text.startsWith(`${scheme}//`));
}

function portOf(text: string, source: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) throw new UsageError(`${source}: port ${JSON.stringify(text)} is not 1..65535`);
  return port;
}

/** A day: longer is a typo, and a timer cannot wait longer than about 24 days anyway. */
const MAX_CONNECT_TIMEOUT_SECONDS = 86_400;

/** PostgreSQL cuts a longer identifier short, and the schema's tables would then be looked for under another name. */
const MAX_IDENTIFIER_BYTES = 63;

/** A percent-encoded part of the URL, decoded; a malformed one is exit 2, naming the part and never its text. */
function decoded(text: string, part: string, source: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new UsageError(
      `${source}: the ${part} of the PostgreSQL URL has a malformed percent-encoding (a % not followed by two hex digits)`,
    );
  }
}

/** Reads `postgresql://user@host:port/db?schema=s&sslmode=require`; a malformed URL or an unknown parameter is exit 2. */
export function parsePostgresUrl(text: string, source: string): PostgresUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${source}: not a PostgreSQL URL (postgresql://user@host:port/database?schema=name)`);
  }
  const shownUrl = new URL(url.href);
  shownUrl.password = '';
  const shown = shownUrl.href;
  const params = url.searchParams;
  const unknown = [...params.keys()].filter((key) => !PARAMETERS.includes(key));
  // Named by key alone: an unknown parameter's value may be a secret (`?password=`).
  shownUrl.search = '';
  if (unknown.length > 0)
    throw new UsageError(
      `${source}: unknown parameter ${unknown.join(', ')} in ${shownUrl.href}?... (known: ${PARAMETERS.join(', ')}; a password goes in PGPASSWORD or a password file)`,
    );
  const param = (key: string): string | undefined => params.get(key) || undefined;
  const sslmode = param('sslmode');
  if (sslmode !== undefined && !(SSL_MODES as readonly string[]).includes(sslmode))
    throw new UsageError(`${source}: sslmode ${JSON.stringify(sslmode)} is not one of ${SSL_MODES.join(', ')}`);
  const timeout = param('connect_timeout');
  if (timeout !== undefined && (!/^\d+$/.test(timeout) || Number(timeout) > MAX_CONNECT_TIMEOUT_SECONDS))
    throw new UsageError(
      `${source}: connect_timeout is whole seconds up to ${MAX_CONNECT_TIMEOUT_SECONDS}, not ${JSON.stringify(timeout)}`,
    );
  if (params.has('schema') && !param('schema'))
    throw new UsageError(`${source}: schema= names no schema; leave it out for ${DEFAULT_SCHEMA}`);
  const schema = param('schema');
  if (schema !== undefined && [...schema].some((char) => char < ' ' || char === '\u007f'))
    throw new UsageError(`${source}: schema ${JSON.stringify(schema)} has a control character; name it in plain text`);
  if (schema !== undefined && Buffer.byteLength(schema) > MAX_IDENTIFIER_BYTES)
    throw new UsageError(`${source}: schema ${JSON.stringify(schema)} is longer than PostgreSQL's ${MAX_IDENTIFIER_BYTES} bytes`);
  // An IPv6 address is bracketed in a URL, not for the connection.
  const host = decoded(url.hostname.replace(/^\[(.*)\]$/, '$1'), 'host', source) || param('host');
  const port = url.port || param('port');
  const database = decoded(url.pathname.slice(1), 'database', source) || param('dbname');
  const user = decoded(url.username, 'user', source) || param('user');
  return {
    ...(host === undefined ? {} : { host }),
    ...(port === undefined ? {} : { port: portOf(port, source) }),
    ...(database === undefined ? {} : { database }),
    ...(user === undefined ? {} : { user }),
    ...(url.password === '' ? {} : { password: decoded(url.password, 'password', source) }),
    ...(schema === undefined ? {} : { schema }),
    ...(sslmode === undefined ? {} : { sslmode: sslmode as SslMode }),
    ...(param('sslrootcert') === undefined ? {} : { sslrootcert: param('sslrootcert') }),
    ...(timeout === undefined ? {} : { connectTimeoutSeconds: Number(timeout) }),
    ...(param('application_name') === undefined ? {} : { applicationName: param('application_name') }),
    ...(param('options') === undefined ? {} : { options: param('options') }),
    shown,
  };
}

/** Where and as whom to connect, once the environment has filled what the URL left out, as libpq fills it. */
export interface PostgresTarget {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly schema: string;
  readonly sslmode: SslMode;
  readonly sslrootcert: string | undefined;
  readonly connectTimeoutMs: number;
  readonly applicationName: string;
  /** The server settings the session starts with: the URL's `options`, else `PGOPTIONS` (the URL's replace it whole, as in libpq). */
  readonly options: string | undefined;
  /** The URL without its password, for messages. */
  readonly shown: string;
}

/** libpq's default wait for a connection is forever; a run waits this long, then retries. */
const DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;

/**
 * The URL with the `PG*` variables filling what it leaves out (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`,
 * `PGSSLMODE`, `PGSSLROOTCERT`, `PGCONNECT_TIMEOUT`, `PGAPPNAME`, `PGOPTIONS`), then libpq's defaults: localhost, 5432,
 * the user's name as role and database, `sslmode=prefer`. The application name, unless given, says it is this tool
 * and which `command` runs, so that the session is recognisable in `pg_stat_activity`.
 */
export function resolveTarget(url: PostgresUrl, env: NodeJS.ProcessEnv, command?: string): PostgresTarget {
  const fromEnv = (name: string): string | undefined => env[name] || undefined;
  const user = url.user ?? fromEnv('PGUSER') ?? fromEnv('USER') ?? userInfo().username;
  const port = url.port ?? (fromEnv('PGPORT') === undefined ? 5432 : portOf(fromEnv('PGPORT') ?? '', 'PGPORT'));
  const sslmode = url.sslmode ?? fromEnv('PGSSLMODE') ?? 'prefer';
  if (!(SSL_MODES as readonly string[]).includes(sslmode))
    throw new UsageError(`PGSSLMODE ${JSON.stringify(sslmode)} is not one of ${SSL_MODES.join(', ')}`);
  const timeout = url.connectTimeoutSeconds ?? Number(fromEnv('PGCONNECT_TIMEOUT') ?? DEFAULT_CONNECT_TIMEOUT_SECONDS);
  return {
    host: url.host ?? fromEnv('PGHOST') ?? 'localhost',
    port,
    database: url.database ?? fromEnv('PGDATABASE') ?? user,
    user,
    schema: url.schema ?? DEFAULT_SCHEMA,
    sslmode: sslmode as SslMode,
    sslrootcert: url.sslrootcert ?? fromEnv('PGSSLROOTCERT'),
    // 0 is libpq's "wait for ever"; an unattended run waits its default instead.
    connectTimeoutMs:
      (Number.isFinite(timeout) && timeout > 0 ? Math.min(timeout, MAX_CONNECT_TIMEOUT_SECONDS) : DEFAULT_CONNECT_TIMEOUT_SECONDS) * 1000,
    applicationName: url.applicationName ?? fromEnv('PGAPPNAME') ?? (command === undefined ? 'area-metrics' : `area-metrics ${command}`),
    options: url.options ?? fromEnv('PGOPTIONS'),
    shown: url.shown,
  };
}
