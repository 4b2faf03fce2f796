// PostgreSQL benchmark: the same 7-day `all` import into a folder and into a database (a throwaway cluster on
// loopback, durability off as for the tests, so the database's own fsyncs do not decide the ratio), interleaved,
// median of N rounds; then the re-run into the database, where every unit is unchanged (no write); and the peak
// memory of a 14-day import against the 7-day one (flat with the range: a run holds at most its lookahead of units).
// `node bench/postgres.mjs --shapes [rounds]`: the server's CPU for the same units COPYed into tables of other shapes.
import { readFileSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { postgresBin, startCluster, SUPERUSER } from '../scripts/postgres-cluster.mjs';
import { againstFolder, importInto, median, startSandboxProcess, summarizeRuns, tempDir, utcDay } from './lib.mjs';

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

/**
 * Shapes of a metric's table, each as the statements that make it in `schema` (`columns`: its column definitions).
 * @type {Record<string, (table: string, columns: string) => string[]>}
 */
const SHAPES = {
  'key store first, B-tree on day (before)': (table, columns) => [
    `CREATE TABLE ${table} (${columns}, PRIMARY KEY (store_code, date, zone))`,
    `CREATE INDEX ON ${table} (day)`,
  ],
  'key store first alone': (table, columns) => [`CREATE TABLE ${table} (${columns}, PRIMARY KEY (store_code, date, zone))`],
  'key store first, BRIN on day (this release)': (table, columns) => [
    `CREATE TABLE ${table} (${columns}, PRIMARY KEY (store_code, date, zone))`,
    `CREATE INDEX ON ${table} USING brin (day) WITH (pages_per_range = 32, autosummarize = on)`,
  ],
  'key instant first alone': (table, columns) => [`CREATE TABLE ${table} (${columns}, PRIMARY KEY (date, store_code, zone))`],
  'key instant first, BRIN on day': (table, columns) => [
    `CREATE TABLE ${table} (${columns}, PRIMARY KEY (date, store_code, zone))`,
    `CREATE INDEX ON ${table} USING brin (day) WITH (pages_per_range = 32, autosummarize = on)`,
  ],
  'no index': (table, columns) => [`CREATE TABLE ${table} (${columns})`],
};

/**
 * The server's CPU for COPYing a 7-day import's units (the CSV files of a folder import) into fresh tables of each
 * shape: one connection, each unit one transaction after a DELETE of its rows, the shapes interleaved round by
 * round; medians. The backend's CPU is read from /proc, so this needs the server on this machine.
 * @param {{ rounds: number, log: (line: string) => void }} options
 */
export async function tableShapes({ rounds, log }) {
  const sandbox = await startSandboxProcess(['--stores', '2000', '--zones', '20', '--days', '30']);
  const folder = await tempDir('shapes');
  const cluster = await startCluster();
  const client = new pg.Client({ host: cluster.host, port: cluster.port, user: SUPERUSER, database: 'postgres' });
  try {
    await importInto({ baseUrl: sandbox.url, from: utcDay(-7), to: utcDay(-1) }, folder, {});
    /** @type {{ metric: string, day: string, header: string, body: Buffer }[]} */
    const units = [];
    for (const metric of ['unique-users', 'traffic', 'avg-screen-time'])
      for (const file of (await readdir(`${folder}/${metric}`)).sort()) {
        const text = await readFile(`${folder}/${metric}/${file}`, 'utf8');
        const cut = text.indexOf('\n') + 1;
        units.push({ metric, day: file.slice(0, 10), header: text.slice(0, cut - 1), body: Buffer.from(text.slice(cut)) });
      }
    const typeOf = /** @type {Record<string, string>} */ ({
      date: 'timestamptz',
      day: 'date',
      unique_users: 'bigint',
      traffic_pct: 'numeric(6,5)',
      avg_screen_time_seconds: 'integer',
    });
    await client.connect();
    const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const cpu = () => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    };
    /** @type {Record<string, number[]>} */
    const seconds = {};
    let schemas = 0;
    for (let round = 1; round <= rounds; round++) {
      for (const [shape, make] of Object.entries(SHAPES)) {
        const schema = `shape_${++schemas}`;
        await client.query(`CREATE SCHEMA ${schema}`);
        for (const unit of units.filter((each) => each.day === units[0]?.day)) {
          const columns = unit.header.split(',').map((name) => `${name} ${typeOf[name] ?? 'text'} NOT NULL`);
          for (const statement of make(`${schema}.${unit.metric.replaceAll('-', '_')}`, columns.join(', '))) await client.query(statement);
        }
        const before = cpu();
        for (const unit of units) {
          const table = `${schema}.${unit.metric.replaceAll('-', '_')}`;
          await client.query('BEGIN');
          await client.query(
            `DELETE FROM ${table} WHERE date >= $1::date AT TIME ZONE 'UTC' AND date < ($1::date + 1) AT TIME ZONE 'UTC'`,
            [unit.day],
          );
          const copy = `COPY ${table} (${unit.header}) FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL (${unit.header}))`;
          await pipeline(Readable.from([unit.body]), client.query(copyFrom(copy)));
          await client.query('COMMIT');
        }
        (seconds[shape] ??= []).push(cpu() - before);
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
      }
      log(`shapes: round ${round}/${rounds}`);
    }
    return Object.fromEntries(Object.entries(seconds).map(([shape, values]) => [shape, median(values)]));
  } finally {
    await client.end().catch(() => {});
    await cluster.stop();
    await sandbox.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

// `node bench/postgres.mjs --shapes [rounds]`: the table shapes alone.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--shapes') {
  const found = await tableShapes({ rounds: Number(process.argv[3] ?? 5), log: (line) => console.error(line) });
  for (const [shape, cpu] of Object.entries(found)) console.log(`${shape}: server CPU ${cpu?.toFixed(2)} s`);
}
