// PostgreSQL benchmark: the same 7-day `all` import into a folder and into a database (a throwaway cluster on
// loopback, durability off as for the tests, so the database's own fsyncs do not decide the ratio), interleaved,
// median of N rounds; then the re-run into the database, where every unit is unchanged (no write); and the peak
// memory of a 14-day import against the 7-day one (flat with the range: a run holds at most its lookahead of units).
import pg from 'pg';
import { postgresBin, startCluster, SUPERUSER } from '../scripts/postgres-cluster.mjs';
import { againstFolder, importInto, startSandboxProcess, summarizeRuns, utcDay } from './lib.mjs';

/** Whether this machine can run the benchmark (the Debian `postgresql` package installed). */
export const postgresAvailable = postgresBin !== undefined;

/** @param {{ rounds: number, log: (line: string) => void }} options */
export async function postgresBenchmark({ rounds, log }) {
  const cluster = await startCluster();
  const admin = new pg.Client({ host: cluster.host, port: cluster.port, user: SUPERUSER, database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE bench');
  await admin.end();
  const urlOf = (/** @type {string} */ schema) => `postgresql://${SUPERUSER}@${cluster.host}:${cluster.port}/bench?schema=${schema}`;
  const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '30']);
  const window = { baseUrl: sandbox.url, from: utcDay(-7), to: utcDay(-1) };
  try {
    log(`postgres: warm-up import of ${window.from}..${window.to}`);
    await importInto(window, urlOf('warm'), {});
    const place = (/** @type {number} */ round) => urlOf(`round_${round}`);
    const compared = await againstFolder({ rounds, log, window, name: 'database', place, env: {}, serverCpu: cluster.cpuSeconds });
    const twoWeeks = summarizeRuns([await importInto({ ...window, from: utcDay(-14) }, urlOf('two_weeks'), {})]);
    return { window, ...compared, twoWeeks };
  } finally {
    await sandbox.stop();
    await cluster.stop();
  }
}
