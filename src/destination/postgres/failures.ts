import { AuthError, errnoCode, OutputError, UnavailableError, UsageError, type AreaMetricsError } from '../../errors.js';
import { duration, type SessionBounds } from './bounds.js';

type ErrorClass = new (message: string, options?: { cause?: unknown }) => AreaMetricsError;

interface Failure {
  readonly error: ErrorClass;
  /** What went wrong and what to do, in words a user acts on. */
  readonly words: string;
  /** Worth another connection attempt: the server may be back in a moment. */
  readonly retry?: true;
}

const UNREACHABLE: Failure = {
  error: UnavailableError,
  words: 'cannot reach the server; check host, port and that it is running',
  retry: true,
};
const STARTING: Failure = { error: UnavailableError, words: 'the server is starting up or shutting down', retry: true };
const UNVERIFIED: Failure = {
  error: UnavailableError,
  words: "the server's certificate cannot be verified; name its CA with sslrootcert, or use sslmode=require to encrypt without checking",
};
const CREDENTIALS: Failure = {
  error: AuthError,
  words: 'credentials rejected; check the role, PGPASSWORD or the password file, and pg_hba.conf',
};

/**
 * What a server's answer (SQLSTATE) or a connection's failure (errno) means for the run, as one table: exit 4 for a
 * server that cannot be reached, 3 for credentials it rejects, 7 for a write it refuses, 2 for a URL that names
 * what is not there. A class of SQLSTATEs is keyed by its first two characters.
 */
const FAILURES: Readonly<Record<string, Failure>> = {
  // connection exceptions
  '08': UNREACHABLE,
  ECONNREFUSED: UNREACHABLE,
  ECONNRESET: UNREACHABLE,
  ETIMEDOUT: UNREACHABLE,
  EHOSTUNREACH: UNREACHABLE,
  ENETUNREACH: UNREACHABLE,
  ENOTFOUND: { error: UnavailableError, words: 'cannot resolve the host name', retry: true },
  EAI_AGAIN: { error: UnavailableError, words: 'cannot resolve the host name', retry: true },
  ENOENT: { error: UnavailableError, words: 'no server listens on that unix socket', retry: true },
  DEPTH_ZERO_SELF_SIGNED_CERT: UNVERIFIED,
  SELF_SIGNED_CERT_IN_CHAIN: UNVERIFIED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNVERIFIED,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNVERIFIED,
  CERT_HAS_EXPIRED: UNVERIFIED,
  ERR_TLS_CERT_ALTNAME_INVALID: {
    error: UnavailableError,
    words: "the server's certificate is for another host name (sslmode=verify-full)",
  },
  '57P01': STARTING,
  '57P02': STARTING,
  '57P03': STARTING,
  '53300': { error: UnavailableError, words: 'the server has too many connections', retry: true },
  '28P01': CREDENTIALS,
  '28000': CREDENTIALS,
  '3D000': { error: UsageError, words: 'the database does not exist; check the URL' },
  '3F000': {
    error: UsageError,
    words:
      "the schema does not exist and the role may not create it; check the URL's ?schema=, or create it (CREATE SCHEMA ... AUTHORIZATION <role>, or grant the role CREATE on the database)",
  },
  '42501': {
    error: OutputError,
    words: 'permission denied; grant the role CREATE on the schema, or INSERT, DELETE and SELECT on its tables',
  },
  '53100': { error: OutputError, words: "the server's disk is full; free some space and run again" },
  '53200': { error: OutputError, words: 'the server is out of memory' },
  '57014': {
    error: OutputError,
    words: "statement cancelled (a statement timeout or a cancel request); raise statement_timeout in the URL's options or PGOPTIONS",
  },
  '25006': { error: OutputError, words: 'the server is read-only (a standby?); point the URL at the primary' },
  '40P01': { error: OutputError, words: 'deadlock with another session; run again' },
  '40001': { error: OutputError, words: 'serialization failure with another session; run again' },
  // data exceptions and integrity violations: a row the table refuses
  '22': { error: OutputError, words: 'the table refused a value' },
  '23': { error: OutputError, words: 'the table refused a row (a constraint added to it?)' },
  '55P03': {
    error: OutputError,
    words: "a lock was not granted in time (lock_timeout); run again, or raise lock_timeout in the URL's options or PGOPTIONS",
  },
  // syntax errors and access rule violations but 42501: a statement the tables no longer fit
  '42': {
    error: UsageError,
    words: "a table of the schema does not fit the tool's statements (altered, or made by something else?); restore or rename it",
  },
};

/** Any other answer with a SQLSTATE: the server refused what the run wrote, and says why. */
const REFUSED: Failure = { error: OutputError, words: 'the server refused the statement' };

/** A SQLSTATE: five characters, digits and capitals (an errno such as ECONNREFUSED is longer). */
const SQLSTATE = /^[0-9A-Z]{5}$/;

function failureOf(error: unknown): Failure | undefined {
  const code = errnoCode(error);
  if (code === undefined) return undefined;
  return FAILURES[code] ?? FAILURES[code.slice(0, 2)] ?? (SQLSTATE.test(code) ? REFUSED : undefined);
}

/** Whether `error` is one a later connection attempt may not meet. */
export function isRetryable(error: unknown): boolean {
  if (failureOf(error)?.retry) return true;
  // pg's own words for a connection that ended or never answered in time (no errno).
  return /Connection terminated|timeout expired|connection timeout/i.test(error instanceof Error ? error.message : '');
}

/**
 * The run's typed error for what the database said while doing `what` at `where` (a URL without its password), with
 * the server's own message; `error` itself when it is already typed or means a bug.
 */
export function databaseError(error: unknown, what: string, where: string): unknown {
  if (error instanceof UsageError || error instanceof AuthError || error instanceof UnavailableError || error instanceof OutputError)
    return error;
  const failure = failureOf(error) ?? (isRetryable(error) ? UNREACHABLE : undefined);
  if (failure === undefined) return error;
  return new failure.error(`${what} ${where}: ${failure.words} (${detailOf(error)})`, { cause: error });
}

/** The server's SQLSTATE (or the connection's errno) and its own words. */
function detailOf(error: unknown): string {
  const message = error instanceof Error && error.message !== '' ? `: ${error.message}` : '';
  return `${errnoCode(error) ?? 'no answer'}${message}`;
}

/**
 * A connection lost once open (the server restarted, the session terminated) while doing `what`: a write refused,
 * as a disk gone away is for files (exit 7), since the server rolls back the transaction in flight.
 */
export function connectionLost(error: unknown, what: string, where: string): OutputError {
  return new OutputError(
    `${what} ${where}: the connection to the server was lost, what it was writing is rolled back; run again (${detailOf(error)})`,
    {
      cause: error,
    },
  );
}

/** A table a statement names, schema-qualified as the tool's statements name every table (`"am1"."traffic"`). */
const QUALIFIED_TABLE = /\b(?:FROM|INTO|UPDATE|COPY|TABLE(?:\s+IF\s+NOT\s+EXISTS)?)\s+((?:"(?:[^"]|"")+"|\w+)\.(?:"(?:[^"]|"")+"|\w+))/i;

/** The first table `statement` names, unquoted for a message (`am1.traffic`). */
export function tableOf(statement: string): string | undefined {
  return QUALIFIED_TABLE.exec(statement)?.[1]?.replace(/"((?:[^"]|"")+)"/g, (_, name: string) => name.replaceAll('""', '"'));
}

/**
 * A wait the session's bounds ended, in words naming the bound in force: a lock not granted within lock_timeout
 * (55P03: naming the table of the statement that waited), a statement past statement_timeout (57014). Exit 7.
 */
export function boundExceeded(
  error: unknown,
  what: string,
  where: string,
  bounds: SessionBounds,
  statement: string,
): OutputError | undefined {
  const code = errnoCode(error);
  const raise = (setting: string): string => `raise ${setting} in the URL's options or PGOPTIONS (${detailOf(error)})`;
  if (code === '55P03') {
    const table = tableOf(statement);
    return new OutputError(
      `${what} ${where}: a lock on ${table ?? 'a table'} was not granted within lock_timeout (${duration(bounds.lockTimeoutMs)}): another session holds it (pg_locks says which); run again once it ends, or ${raise('lock_timeout')}`,
      { cause: error },
    );
  }
  if (code === '57014' && /statement timeout/i.test(error instanceof Error ? error.message : ''))
    return new OutputError(
      `${what} ${where}: statement cancelled when it ran past statement_timeout (${duration(bounds.statementTimeoutMs)}); run again, or ${raise('statement_timeout')}`,
      { cause: error },
    );
  return undefined;
}

/**
 * A connection that stopped answering while a statement ran (a frozen network path, a failover): dropped after
 * `silentMs`. The server ends the statement and rolls it back by its own bounds.
 */
export function noAnswer(what: string, where: string, silentMs: number, bounds: SessionBounds): OutputError {
  return new OutputError(
    `${what} ${where}: no answer from the server in ${duration(silentMs)} (statement_timeout ${duration(bounds.statementTimeoutMs)} and a margin): the connection is dropped and what it was writing rolled back; check the path to the server and run again`,
  );
}

/** SQLSTATEs of a startup refused for a setting: one it does not know, or a value it does not take. */
const BAD_SETTING = new Set(['42704', '22023', '42601']);

/** A connection refused for the settings the URL's `options` or `PGOPTIONS` gave: exit 2, naming the server's words. */
export function refusedOptions(error: unknown, where: string, options: string | undefined): UsageError | undefined {
  const code = errnoCode(error);
  if (options === undefined || code === undefined || !BAD_SETTING.has(code)) return undefined;
  return new UsageError(`cannot connect to ${where}: the server refused a setting of the URL's options or PGOPTIONS (${detailOf(error)})`, {
    cause: error,
  });
}
