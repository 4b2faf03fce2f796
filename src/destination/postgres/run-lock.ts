import { setTimeout as sleep } from 'node:timers/promises';
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

/** How often a waiting run asks for the lock again: a wait the server cannot interrupt would outlast SIGTERM. */
const LOCK_POLL_MS = 500;

/**
 * Takes the run's lock on the schema: a session-level advisory lock, held until the connection ends (a killed run's
 * ends with it, so no lock outlives its run). While another run holds it, says who, and waits for it, asking again
 * every half second, so that SIGINT or SIGTERM (`signal`) ends the wait at once.
 */
export async function takeRunLock(client: Client, schema: string, logger: Logger, where: string, signal?: AbortSignal): Promise<void> {
  const args = [LOCK_CLASS, schema];
  const taken = async (): Promise<boolean> =>
    (await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${KEYS}) AS taken`, args)).rows[0]?.taken === true;
  if (await taken()) return;
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
  do {
    await sleep(LOCK_POLL_MS, undefined, signal ? { signal } : {}).catch(() => {});
    if (signal?.aborted) throw signal.reason;
  } while (!(await taken()));
}
