import type { Client } from 'pg';
import type { Logger } from '../../log/logger.js';

/** The advisory lock's first key, the tool's own ("AMET"); the second is the schema's hash, so each schema has one. */
const LOCK_CLASS = 0x414d4554;

/** The lock's keys as SQL arguments: `$1` the class, `$2` the schema (hashed to a non-negative int4). */
const KEYS = '$1::int, hashtext($2) & 2147483647';

interface Holder {
  readonly pid: number;
  readonly application_name: string;
  readonly since: Date | null;
}

/**
 * Takes the run's lock on the schema: a session-level advisory lock, held until the connection ends (a killed run's
 * ends with it, so no lock outlives its run). While another run holds it, says who, and waits for it.
 */
export async function takeRunLock(client: Client, schema: string, logger: Logger, where: string): Promise<void> {
  const args = [LOCK_CLASS, schema];
  const tried = await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${KEYS}) AS taken`, args);
  if (tried.rows[0]?.taken) return;
  const { rows } = await client.query<Holder>(
    'SELECT a.pid, a.application_name, a.backend_start AS since FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid ' +
      `WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 AND l.objid::bigint = (hashtext($2) & 2147483647) AND l.objsubid = 2`,
    args,
  );
  const holder = rows[0];
  const who =
    holder === undefined
      ? 'another run'
      : `another run (server pid ${holder.pid}, ${holder.application_name || 'no application name'}, connected ${holder.since?.toISOString() ?? 'at an unknown time'})`;
  logger.warn(`${who} is writing to ${where}; waiting for it to end: two runs never interleave`);
  await client.query(`SELECT pg_advisory_lock(${KEYS})`, args);
}
