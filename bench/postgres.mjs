// PostgreSQL benchmark: the same 7-day `all` import into a folder and into a database (a throwaway cluster on
// loopback, durability off as for the tests, so the database's own fsyncs do not decide the ratio), interleaved,
// median of N rounds; then the re-run into the database, where every unit is unchanged (no write); and the peak
// memory of a 1-day import against the 7-day one (flat with the range).
import pg from 'pg';
import { postgresBin, startCluster, SUPERUSER } from '../scripts/postgres-cluster.mjs';
import { importInto, median, startSandboxProcess, tempDir, utcDay } from './lib.mjs';
import { rm } from 'node:fs/promises';

/** @typedef {import('./lib.mjs').ImportRun} ImportRun */

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
  /** @type {{ folder: ImportRun[], database: ImportRun[], rerun: ImportRun[] }} */
  const samples = { folder: [], database: [], rerun: [] };
  /** @type {ImportRun | undefined} */
  let oneDay;
  try {
    log(`postgres: warm-up import of ${window.from}..${window.to}`);
    await importInto(window, urlOf('warm'), {});
    for (let round = 1; round <= rounds; round++) {
      const folder = await tempDir('pg-folder');
      try {
        samples.folder.push(await importInto(window, folder, {}));
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
      samples.database.push(await importInto(window, urlOf(`round_${round}`), {}));
      const rerun = await importInto(window, urlOf(`round_${round}`), {});
      // Every unit of the re-run already holds its rows: nothing may be written again.
      if (rerun.unchanged !== rerun.units) throw new Error(`the re-run rewrote ${rerun.units - rerun.unchanged} of ${rerun.units} units`);
      samples.rerun.push(rerun);
      const wall = (/** @type {ImportRun[]} */ runs) => ((runs.at(-1)?.wallMs ?? Number.NaN) / 1000).toFixed(2);
      log(
        `round ${round}/${rounds}: folder ${wall(samples.folder)} s, database ${wall(samples.database)} s, re-run ${wall(samples.rerun)} s`,
      );
    }
    oneDay = await importInto({ ...window, from: window.to }, urlOf('one_day'), {});
  } finally {
    await sandbox.stop();
    await cluster.stop();
  }
  const summarize = (/** @type {ImportRun[]} */ runs) => ({
    wallMs: median(runs.map((run) => run.wallMs)),
    cpuSeconds: median(runs.map((run) => run.cpuSeconds)),
    maxRssKb: median(runs.map((run) => run.maxRssKb)),
    rows: runs[0]?.rows,
    unchanged: runs[0]?.unchanged,
  });
  const byRound = samples.database.map((run, index) => run.wallMs / (samples.folder[index]?.wallMs ?? Number.NaN));
  return {
    window,
    folder: summarize(samples.folder),
    database: summarize(samples.database),
    rerun: summarize(samples.rerun),
    oneDay: summarize(oneDay === undefined ? [] : [oneDay]),
    databaseVsFolderByRound: byRound,
  };
}
