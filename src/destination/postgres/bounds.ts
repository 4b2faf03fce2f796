/**
 * The server settings that bound every wait of a run's session, each in the unit `pg_settings` gives it (ms for the
 * timeouts, s for the keepalives): no lock wait, statement or open transaction outlasts 2 minutes, and the server
 * finds out within seconds that a client is gone, so that a killed run's session (and the run's lock) ends with it.
 */
export const DEFAULT_BOUNDS = {
  lock_timeout: 60_000,
  statement_timeout: 110_000,
  idle_in_transaction_session_timeout: 60_000,
  // PostgreSQL 14+ (an older server has no such setting, and it is left out): how often a running statement checks
  // that its client is still there. Without it a session waiting on a lock outlives its killed client.
  client_connection_check_interval: 2_000,
  // A peer that vanished (a failover, a partition) is found by the server in 30 + 3 × 10 s.
  tcp_keepalives_idle: 30,
  tcp_keepalives_interval: 10,
  tcp_keepalives_count: 3,
} as const;

export type BoundName = keyof typeof DEFAULT_BOUNDS;
export const BOUND_NAMES = Object.keys(DEFAULT_BOUNDS) as BoundName[];

/** How our side of the connection finds a path gone while idle; the answer bound covers it while a statement runs. */
export const CLIENT_KEEPALIVE_MS = 30_000;

/** A row of `pg_settings`: the value in force and where it came from (`client`: the startup options). */
export interface ServerSetting {
  readonly name: string;
  readonly setting: string;
  readonly source: string;
}

/** The bounds in force in a session once settled, in ms, and how long the client waits for any answer. */
export interface SessionBounds {
  readonly lockTimeoutMs: number;
  readonly statementTimeoutMs: number;
  /** Silence while a statement runs longer than this is a connection that stopped answering; none if unbounded. */
  readonly answerMs: number | undefined;
}

/**
 * Which defaults to set, and the bounds then in force. A setting the URL's `options` or `PGOPTIONS` gave (source
 * `client`) is kept whatever it is, 0 ("no bound") included: the user asked for it. Any other (the server's file, the
 * role's or the database's `ALTER ... SET`) is kept where it is already tighter than ours, else ours is set.
 */
export function settleBounds(current: readonly ServerSetting[]): {
  readonly toSet: readonly { readonly name: BoundName; readonly value: string }[];
  readonly bounds: SessionBounds;
} {
  const inForce = new Map<string, number>();
  const toSet: { name: BoundName; value: string }[] = [];
  for (const { name, setting, source } of current) {
    if (!(name in DEFAULT_BOUNDS)) continue;
    const ours = DEFAULT_BOUNDS[name as BoundName];
    const value = Number(setting);
    const kept = source === 'client' || (value > 0 && value <= ours);
    inForce.set(name, kept ? value : ours);
    if (!kept) toSet.push({ name: name as BoundName, value: String(ours) });
  }
  const statementTimeoutMs = inForce.get('statement_timeout') ?? DEFAULT_BOUNDS.statement_timeout;
  return {
    toSet,
    bounds: {
      lockTimeoutMs: inForce.get('lock_timeout') ?? DEFAULT_BOUNDS.lock_timeout,
      statementTimeoutMs,
      answerMs: answerBound(statementTimeoutMs),
    },
  };
}

/** The bounds before the server has said what is in force: ours. */
export const DEFAULT_SESSION_BOUNDS: SessionBounds = settleBounds([]).bounds;

/**
 * How long the client waits for an answer to a statement: the statement's own bound plus a tenth of it (1 to 10 s),
 * so that the server's timeout, with its clearer words, normally comes first; none when statements are unbounded.
 */
export function answerBound(statementTimeoutMs: number): number | undefined {
  if (statementTimeoutMs <= 0) return undefined;
  return statementTimeoutMs + Math.min(10_000, Math.max(1_000, Math.round(statementTimeoutMs / 10)));
}

/** A bound in words: `300 ms`, `2 s`, `1.5 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
