import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from 'pg';
import type { Logger } from '../../log/logger.js';

/** The advisory lock's first key, the tool's own ("AMET"); the second is the schema's hash, so each schema has one. */
const LOCK_CLASS = 0x414d4554;

/** The lock's keys as SQL arguments: `$1` the class, `$2` the schema (hashed to a non-negative int4). */
const KEYS = '$1::int, hashtext($2) & 2147483647';

/** Who holds the lock, as pg_stat_activity shows its session. */
export interface Holder {
  readonly pid: number;
  readonly application_name: string;
  readonly client_addr: string | null;
  readonly since: Date | null;
}

/** How often a waiting run asks for the lock again: a wait the server cannot interrupt would outlast SIGTERM. */
const LOCK_POLL_MS = 500;

/** How often a run still waiting says so again, with who holds the lock now and how long it has waited. */
const REPORT_EVERY_POLLS = 60;

/**
 * Takes the run's lock on the schema: a session-level advisory lock, held until the connection ends (a killed run's
 * session ends within seconds, see bounds.ts, and the lock with it). While another run holds it, says who (its
 * server pid, application name, address, since when) and, every 30 s, how long it has waited; asks again every half
 * second, so that SIGINT or SIGTERM (`signal`) ends the wait at once.
 */
export async function takeRunLock(client: Client, schema: string, logger: Logger, where: string, signal?: AbortSignal): Promise<void> {
  const args = [LOCK_CLASS, schema];
  const taken = async (): Promise<boolean> =>
    (await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${KEYS}) AS taken`, args)).rows[0]?.taken === true;
  if (await taken()) return;
  const holder = async (): Promise<string> => {
    const { rows } = await client.query<Holder>(
      'SELECT a.pid, a.application_name, host(a.client_addr) AS client_addr, a.backend_start AS since FROM pg_locks l ' +
        'JOIN pg_stat_activity a ON a.pid = l.pid ' +
        `WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 AND l.objid::bigint = (hashtext($2) & 2147483647) AND l.objsubid = 2`,
      args,
    );
    return describeHolder(rows[0]);
  };
  const started = performance.now();
  logger.warn(`${await holder()} is writing to ${where}; waiting for it to end: two runs never interleave`);
  for (let polls = 1; ; polls++) {
    await sleep(LOCK_POLL_MS, undefined, signal ? { signal } : {}).catch(() => {});
    if (signal?.aborted) throw signal.reason;
    if (await taken()) return;
    if (polls % REPORT_EVERY_POLLS === 0)
      logger.warn(`still waiting for ${await holder()} to end: waited ${Math.round((performance.now() - started) / 1000)} s so far`);
  }
}

/** The run holding the lock, as a user finds it in pg_stat_activity (and ends it with pg_terminate_backend if it must). */
export function describeHolder(holder: Holder | undefined): string {
  if (holder === undefined) return 'another run';
  const from = holder.client_addr === null ? 'a local socket' : holder.client_addr;
  const since = holder.since === null ? 'an unknown time' : holder.since.toISOString();
  return `another run (server pid ${holder.pid}, ${JSON.stringify(holder.application_name || 'no application name')} from ${from}, connected since ${since})`;
}
