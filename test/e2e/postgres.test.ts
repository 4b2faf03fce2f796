import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetricName } from '../../src/metrics/descriptors.js';
import { METRIC_NAMES } from '../../src/metrics/names.js';
import { assertBuilt, waitUntil, type CliResult } from '../helpers/cli.js';
import { startPostgres, warnIfPostgresMissing, type TestPostgres } from '../helpers/postgres.js';
import { daysFrom, rowVersions, sandboxRows, tableRows } from '../helpers/postgres-rows.js';
import { answerPage, envelope, startCraftedVendor } from '../helpers/crafted-vendor.js';
import { startLineageServer } from '../helpers/lineage-server.js';
import { openLineageErrors } from '../helpers/openlineage.js';
import { docQueries } from '../helpers/markdown.js';
import { clockedCli, noonToday } from '../helpers/sandbox-clock.js';
import { importArgs, SECRET_ENV, useSandbox } from '../helpers/vendor.js';

/**
 * Imports into a real PostgreSQL server (a throwaway cluster) from the sandbox, and reads the tables back with the pg
 * client: the rows the sandbox holds, a late correction replacing exactly its day, a re-run changing nothing, a
 * killed run leaving each unit old or new, two runs never interleaving, `status` reading the database.
 */
const skip = warnIfPostgresMissing('the PostgreSQL end-to-end tests');
const CLOCK = noonToday();
const { runCli, startCli, startInProcess } = clockedCli(CLOCK, SECRET_ENV);
const utcDay = (offsetDays: number) => new Date(CLOCK.getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const FROM = utcDay(-4);
const TO = utcDay(-2);
const SCHEMA = 'area_metrics';

let server: TestPostgres;
let databases = 0;
const sandbox = useSandbox({ stores: 6, zones: 4, days: 10, seed: 5, clientId: 'pg-client', now: () => CLOCK });
const auth = () => ['--base-url', sandbox.url, '--client-id', sandbox.clientId];
/** unique-users of the last day from a crafted vendor into a database. */
const fromCrafted = (vendorUrl: string, output: string) =>
  importArgs({ url: vendorUrl, clientId: 'c' }, 'unique-users', output, '--date', TO);

/** A fresh database of the cluster and its `-o` URL. */
async function freshDatabase(): Promise<{ database: string; schema: string; url: string }> {
  const database = `run_${++databases}`;
  await server.query(`CREATE DATABASE ${database}`);
  return { database, schema: SCHEMA, url: server.url({ database, params: { schema: SCHEMA } }) };
}

async function everyTable(at: { database: string; schema: string }): Promise<Map<MetricName, string[]>> {
  return new Map(await Promise.all(METRIC_NAMES.map(async (metric) => [metric, await tableRows(server, at, metric)] as const)));
}

describe.skipIf(skip)('-o postgresql://', () => {
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a backfill equals the sandbox row for row; a re-run writes nothing; a late correction replaces exactly its day', async () => {
    const at = await freshDatabase();
    const first = await runCli(['all', ...auth(), '--from', FROM, '--to', TO, '-o', at.url]);
    expect(first.code, first.stderr).toBe(0);
    for (const metric of METRIC_NAMES)
      expect(await tableRows(server, at, metric)).toEqual(sandboxRows(sandbox, metric, daysFrom(FROM, TO)));

    const versions = async () =>
      Promise.all(daysFrom(FROM, TO).flatMap((day) => METRIC_NAMES.map(async (metric) => rowVersions(server, at, metric, day))));
    const before = await versions();
    const again = await runCli(['all', ...auth(), '--from', FROM, '--to', TO, '-o', at.url]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/imported 9 of 9 units, 162 rows, 9 unchanged/);
    // No new row versions: every row is the one the first run wrote.
    expect(await versions()).toEqual(before);

    const corrected = utcDay(-3);
    sandbox.setPublishing({ corrected: [{ day: corrected, revision: 1 }] });
    const late = await runCli(['traffic', ...auth(), '--from', FROM, '--to', TO, '-o', at.url]);
    expect(late.code, late.stderr).toBe(0);
    expect(late.stderr).toMatch(/2 unchanged/);
    expect(await tableRows(server, at, 'traffic', corrected)).toEqual(sandboxRows(sandbox, 'traffic', [corrected]));
    for (const day of [FROM, TO])
      expect(await rowVersions(server, at, 'traffic', day)).toEqual(before[daysFrom(FROM, TO).indexOf(day) * 3 + 2]);
    expect(await rowVersions(server, at, 'traffic', corrected)).not.toEqual(before[5]);

    // The state, the coverage and the run manifests are rows beside the data.
    const units = await server.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCHEMA}.area_metrics_units`, [], at.database);
    expect(units[0]?.n).toBe('9');
    const runs = await server.query<{ exit_code: number; units: string }>(
      `SELECT exit_code, jsonb_array_length(manifest->'units')::text AS units FROM ${SCHEMA}.area_metrics_runs ORDER BY run_id`,
      [],
      at.database,
    );
    expect(runs).toEqual([
      { exit_code: 0, units: '9' },
      { exit_code: 0, units: '9' },
      { exit_code: 0, units: '3' },
    ]);
    // Rows, not files: a database's manifest names no layout or format (both flags are refused with one).
    const files = await server.query<{ keys: string[] }>(
      `SELECT array(SELECT jsonb_object_keys(manifest)) AS keys FROM ${SCHEMA}.area_metrics_runs`,
      [],
      at.database,
    );
    for (const { keys } of files) expect(keys).toEqual(expect.arrayContaining(['days', 'units']));
    for (const { keys } of files) expect(keys).not.toEqual(expect.arrayContaining(['layout']));
    for (const { keys } of files) expect(keys).not.toEqual(expect.arrayContaining(['format']));

    // A table emptied or dropped behind the tool's back: its coverage no longer holds, and the next run loads it again.
    await server.query(`TRUNCATE ${SCHEMA}.unique_users`, [], at.database);
    await server.query(`DROP TABLE ${SCHEMA}.avg_screen_time`, [], at.database);
    const reloaded = await runCli(['all', ...auth(), '--from', FROM, '--to', TO, '-o', at.url]);
    expect(reloaded.code, reloaded.stderr).toBe(0);
    expect(reloaded.stderr).toMatch(/imported 9 of 9 units, 162 rows, 3 unchanged/);
    for (const metric of METRIC_NAMES)
      expect(await tableRows(server, at, metric)).toEqual(sandboxRows(sandbox, metric, daysFrom(FROM, TO)));
  });

  it('status, reopen, accept and --catch-up read the state from the database; a state lost after the commits is repaired', async () => {
    const at = await freshDatabase();
    const empty = await runCli(['status', '-o', at.url]);
    expect([empty.code, empty.stderr.trim().split('\n')]).toEqual([
      2,
      [expect.stringMatching(/no state in postgresql:.*: nothing has been imported into schema area_metrics of that database yet$/)],
    ]);
    const imported = await runCli(['all', ...auth(), '--from', FROM, '--to', TO, '-o', at.url]);
    expect(imported.code, imported.stderr).toBe(0);
    const status = await runCli(['status', '-o', at.url, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { state: string; metrics: { metric: string; lastCompleteDay: string | null }[] };
    expect(report.state).toContain('area_metrics.area_metrics_state');
    expect(report.metrics.map((metric) => [metric.metric, metric.lastCompleteDay]).sort()).toEqual(
      METRIC_NAMES.map((metric) => [metric, TO]).sort(),
    );
    // Units committed whose state was never written (a run killed between the two): the next run finds their rows'
    // hash equal, writes nothing, and records them.
    await server.query(`DELETE FROM ${SCHEMA}.area_metrics_state`, [], at.database);
    const repaired = await runCli(['all', ...auth(), '--from', FROM, '--to', TO, '-o', at.url]);
    expect(repaired.stderr).toMatch(/imported 9 of 9 units, 162 rows, 9 unchanged/);
    const again = JSON.parse((await runCli(['status', '-o', at.url, '--json'])).stdout) as typeof report;
    expect(again.metrics.map((metric) => metric.lastCompleteDay)).toEqual([TO, TO, TO]);
    // reopen and accept change the state row; their manifests are rows too.
    const traffic = async () => {
      const json = JSON.parse((await runCli(['status', '-o', at.url, '--json'])).stdout) as {
        metrics: { metric: string; pending: { day: string }[]; accepted: string[][] }[];
      };
      const status = json.metrics.find((metric) => metric.metric === 'traffic');
      return { pending: status?.pending.map((pending) => pending.day), accepted: status?.accepted };
    };
    expect((await runCli(['reopen', 'traffic', '--date', TO, '-o', at.url])).code).toBe(0);
    expect(await traffic()).toEqual({ pending: [TO], accepted: [] });
    expect((await runCli(['accept', 'traffic', '--date', TO, '-o', at.url])).code).toBe(0);
    expect(await traffic()).toEqual({ pending: [], accepted: [[TO, TO]] });
    const settled = await server.query<{ command: string }>(
      `SELECT manifest->>'command' AS command FROM ${SCHEMA}.area_metrics_runs ORDER BY run_id`,
      [],
      at.database,
    );
    expect(settled.map((row) => row.command.split(' ')[0])).toEqual(['all', 'all', 'reopen', 'accept']);
    const catchUp = await runCli(['all', ...auth(), '--catch-up', '-o', at.url]);
    expect(catchUp.code, catchUp.stderr).toBe(0);
    // From the day after the last complete one, through yesterday: the state came from the database.
    expect(catchUp.stderr).toContain(`unique-users ${utcDay(-1)}`);
    expect(catchUp.stderr).not.toContain(`unique-users ${TO}`);
  });

  it("docs/import.md's queries: a unit's window holds its coverage's rows; a local day is what --days local loads", async () => {
    const [utc, local] = [await freshDatabase(), await freshDatabase()];
    const day = utcDay(-3);
    expect((await runCli(['traffic', ...auth(), '--from', FROM, '--to', TO, '-o', utc.url])).code).toBe(0);
    expect((await runCli(['traffic', ...auth(), '--days', 'local', '--date', day, '-o', local.url])).code).toBe(0);
    // The docs' day, and the day after it, are this test's.
    const [unit, localDay, ...more] = docQueries('postgres').map((sql) =>
      sql.replaceAll('2026-11-20', day).replaceAll('2026-11-21', utcDay(-2)),
    );
    expect(more).toEqual([]);
    const keys = (sql: string, database: string) =>
      server.query<{ key: string }>(
        `SELECT concat_ws(' ', store_code, "date", zone, "day") AS key FROM (${sql}) q ORDER BY 1`,
        [],
        database,
      );
    const unitRows = await keys(unit!, utc.database);
    const [coverage] = await server.query<{ rows: string }>(
      `SELECT rows::text FROM ${SCHEMA}.area_metrics_units WHERE metric = 'traffic' AND day = $1 AND store = ''`,
      [day],
      utc.database,
    );
    expect(unitRows.length).toBeGreaterThan(0);
    expect(String(unitRows.length)).toBe(coverage?.rows);
    const localRows = await keys(localDay!, utc.database);
    expect(localRows).toEqual(await keys(`SELECT * FROM ${SCHEMA}.traffic`, local.database));
    expect(localRows).not.toEqual(unitRows);
  });

  it("lineage names each table as OpenLineage does (postgres://host:port, db.schema.table), and the run id is the manifest row's", async () => {
    const at = await freshDatabase();
    const lineage = await startLineageServer();
    try {
      const result = await runCli(['all', ...auth(), '--date', TO, '-o', at.url], { env: { OPENLINEAGE_URL: lineage.url } });
      expect(result.code, result.stderr).toBe(0);
      for (const { body } of lineage.received) expect(openLineageErrors(body)).toEqual([]);
      const complete = lineage.received[1]?.body as {
        run: { runId: string };
        outputs: { namespace: string; name: string; facets: Record<string, unknown> }[];
      };
      expect(complete.outputs.map(({ namespace, name }) => [namespace, name])).toEqual(
        METRIC_NAMES.map((metric) => [`postgres://127.0.0.1:${server.port}`, `${at.database}.${SCHEMA}.${metric.replaceAll('-', '_')}`]),
      );
      expect(Object.keys(complete.outputs[0]!.facets).sort()).toEqual(['schema']);
      const runs = await server.query<{ run_id: string }>(`SELECT run_id FROM ${SCHEMA}.area_metrics_runs`, [], at.database);
      expect(runs).toEqual([{ run_id: complete.run.runId }]);
    } finally {
      await lineage.close();
    }
  });

  it('text a CSV quotes or escapes (comma, quote, backslash, \\N, spaces, non-ASCII) arrives in the table as the vendor sent it', async () => {
    const at = await freshDatabase();
    // Control characters are refused by the data contract before any output; what it lets through must arrive whole.
    const zones = ['a,b', 'say "hi"', "it's", 'back\\slash', 'Zoné ☕', '\\N', ' spaced '];
    const vendor = await startCraftedVendor((request, response) =>
      answerPage(
        response,
        envelope([
          {
            store_code: 'S,"1"',
            date: `${request.day}T12:00:00Z`,
            granularity: 'daily',
            values: zones.map((zone, index) => ({ zone, unique_users: index })),
          },
        ]),
      ),
    );
    try {
      const result = await runCli(fromCrafted(vendor.url, at.url));
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await vendor.close();
    }
    const rows = await server.query<{ store_code: string; zone: string; unique_users: string }>(
      `SELECT store_code, zone, unique_users::text FROM ${SCHEMA}.unique_users ORDER BY unique_users`,
      [],
      at.database,
    );
    expect(rows).toEqual(zones.map((zone, index) => ({ store_code: 'S,"1"', zone, unique_users: String(index) })));
  });

  it('--on-invalid skip: the records set aside are rows of area_metrics_rejected, under their store, replaced with their unit', async () => {
    const at = await freshDatabase();
    let bad = true;
    const vendor = await startCraftedVendor((request, response) => {
      const good = { store_code: 'S1', date: `${request.day}T12:00:00Z`, granularity: 'daily', values: [{ zone: 'A', unique_users: 4 }] };
      const broken = { ...good, store_code: 'S2', values: [{ zone: 'A', unique_users: -1 }] };
      const results = bad ? [good, broken] : [good, { ...good, store_code: 'S2' }];
      const store = request.url.searchParams.get('store_code');
      answerPage(response, envelope(store === null ? results : results.filter((result) => result.store_code === store)));
    });
    const rejected = () =>
      server.query<{ store: string; field: string }>(
        `SELECT store, record->>'field' AS field FROM ${SCHEMA}.area_metrics_rejected`,
        [],
        at.database,
      );
    try {
      const args = [...fromCrafted(vendor.url, at.url), '--on-invalid', 'skip'];
      expect((await runCli(args)).code).toBe(0);
      // Kept under the record's store, so that a load of that store alone replaces them.
      expect(await rejected()).toEqual([{ store: 'S2', field: 'values[0].unique_users' }]);
      const [manifest] = await server.query<{ rejected: unknown }>(
        `SELECT manifest->'units'->0->'rejected' AS rejected FROM ${SCHEMA}.area_metrics_runs`,
        [],
        at.database,
      );
      expect(manifest?.rejected).toEqual({ records: 1, path: `${SCHEMA}.area_metrics_rejected` });
      bad = false;
      expect((await runCli([...args, '--store', 'S1'])).code).toBe(0);
      expect(await rejected()).toHaveLength(1);
      expect((await runCli([...args, '--store', 'S2'])).code).toBe(0);
      expect(await rejected()).toEqual([]);
    } finally {
      await vendor.close();
    }
  });

  it("--days local replaces a local day by its `day`; --store replaces only that store's rows", async () => {
    const at = await freshDatabase();
    const localRows = (day: string) =>
      sandboxRows(sandbox, 'traffic', [utcDay(-5), utcDay(-4), utcDay(-3)]).filter((row) => (JSON.parse(row) as string[])[2] === day);
    const local = await runCli(['traffic', ...auth(), '--days', 'local', '--from', FROM, '--to', utcDay(-3), '-o', at.url]);
    expect(local.code, local.stderr).toBe(0);
    const day = (text: string) => ` WHERE day = '${text}'`;
    const readDay = async (text: string) =>
      (
        await server.query(
          `SELECT store_code, (extract(epoch FROM date) * 1000)::bigint::text AS ms, day::text, granularity, zone, traffic_pct::text FROM ${SCHEMA}.traffic${day(text)}`,
          [],
          at.database,
        )
      )
        .map((row) => JSON.stringify(Object.values(row)))
        .sort();
    expect(await readDay(FROM)).toEqual(localRows(FROM));
    const [store] = sandbox.results('traffic', { gte: `${FROM}T00:00:00Z`, lte: `${FROM}T23:59:59Z` }) as { store_code: string }[];
    sandbox.setPublishing({ corrected: [{ day: FROM, stores: [store!.store_code], revision: 1 }] });
    const before = await readDay(utcDay(-3));
    const one = await runCli(['traffic', ...auth(), '--days', 'local', '--date', FROM, '--store', store!.store_code, '-o', at.url]);
    expect(one.code, one.stderr).toBe(0);
    expect(await readDay(FROM)).toEqual(localRows(FROM));
    expect(await readDay(utcDay(-3))).toEqual(before);
    const units = await server.query(
      `SELECT day::text, store, rows FROM ${SCHEMA}.area_metrics_units ORDER BY day, store`,
      [],
      at.database,
    );
    expect(units).toEqual([
      {
        day: FROM,
        store: store!.store_code,
        rows: String(localRows(FROM).filter((row) => row.startsWith(`["${store!.store_code}"`)).length),
      },
      { day: utcDay(-3), store: '', rows: String(before.length) },
    ]);
  });

  it('sslmode=require against a server without TLS: exit 4, one line saying so', async () => {
    const url = server.url({ database: 'postgres', params: { schema: 'never', sslmode: 'require' } });
    const result = await runCli(['traffic', ...auth(), '--date', TO, '-o', url]);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      `error: cannot connect to ${url}: the server does not offer TLS, which sslmode=require asks for; turn on ssl on the server, or use sslmode=prefer\n`,
    );
  });

  it('SIGKILL in the middle of a run leaves every unit either old or new, never mixed; the next run finishes the job', async () => {
    assertBuilt();
    const at = await freshDatabase();
    const days = daysFrom(utcDay(-6), TO);
    const first = await runCli(['all', ...auth(), '--from', days[0]!, '--to', TO, '-o', at.url]);
    expect(first.code, first.stderr).toBe(0);
    const old = await everyTable(at);
    sandbox.setPublishing({ corrected: days.map((day) => ({ day, revision: 1 })) });
    const fresh = new Map(METRIC_NAMES.map((metric) => [metric, sandboxRows(sandbox, metric, days)] as const));
    // Slow answers and one unit at a time: the kill lands between commits or inside one.
    sandbox.setFaults({ latencyMs: 40 });
    const started = new Date();
    const run = startCli(['all', ...auth(), '--from', days[0]!, '--to', TO, '-o', at.url, '--concurrency', '1'], { process: true });
    await waitUntil(async () => {
      const rows = await server.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM ${SCHEMA}.area_metrics_units WHERE loaded_at > $1`,
        [started],
        at.database,
      );
      return Number(rows[0]?.n) >= 4;
    }, 'four units committed');
    run.kill('SIGKILL');
    const ended = await run.done;
    expect(ended.signal).toBe('SIGKILL');

    const states = { old: 0, new: 0 };
    for (const metric of METRIC_NAMES) {
      for (const day of days) {
        const rows = await tableRows(server, at, metric, day);
        const inDay = (all: readonly string[]) => all.filter((row) => tableRowsOfDay(row, day));
        const isNew = JSON.stringify(rows) === JSON.stringify(inDay(fresh.get(metric)!));
        const isOld = JSON.stringify(rows) === JSON.stringify(inDay(old.get(metric)!));
        expect(isNew || isOld, `${metric} ${day} is neither the old rows nor the new ones`).toBe(true);
        states[isNew ? 'new' : 'old']++;
      }
    }
    expect(states.new).toBeGreaterThanOrEqual(4);
    expect(states.old).toBeGreaterThan(0);

    sandbox.setFaults({});
    const next = await runCli(['all', ...auth(), '--from', days[0]!, '--to', TO, '-o', at.url]);
    expect(next.code, next.stderr).toBe(0);
    expect(await everyTable(at)).toEqual(fresh);
  });

  it('a connection lost in the middle (the session terminated): exit 7, one line, every unit whole or absent', async () => {
    const at = await freshDatabase();
    sandbox.setFaults({ latencyMs: 40 });
    const run = startInProcess(['all', ...auth(), '--from', FROM, '--to', TO, '-o', at.url, '--concurrency', '1']);
    const committed = async () =>
      Number(
        (
          await server.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM pg_stat_user_tables WHERE relname = 'area_metrics_units'`,
            [],
            at.database,
          )
        )[0]?.n,
      ) > 0 &&
      Number((await server.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCHEMA}.area_metrics_units`, [], at.database))[0]?.n) >=
        2;
    await waitUntil(committed, 'two units committed');
    await server.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'area-metrics %'");
    const result = await run.done;
    expect(result.code).toBe(7);
    // The loss meets a unit's transaction, the state's write after it (the unit's line, then the run's summary), or
    // the run's own next statement: one line says it, whichever.
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('error: '));
    expect(errors[0]).toMatch(
      /^error: (?:[a-z-]+ \d{4}-\d{2}-\d{2}: )?cannot .* postgresql:\/\/.*: the connection to the server was lost, what it was writing is rolled back; run again \(/,
    );
    expect(errors.slice(1)).toEqual(
      errors.length === 1 ? [] : [expect.stringMatching(/^error: imported \d+ of 9 units, .*the output could not be written$/)],
    );
    // Each unit the coverage names holds its rows, whole; the rest hold none.
    const units = await server.query<{ metric: MetricName; day: string }>(
      `SELECT metric, day::text FROM ${SCHEMA}.area_metrics_units`,
      [],
      at.database,
    );
    for (const { metric, day } of units) expect(await tableRows(server, at, metric, day)).toEqual(sandboxRows(sandbox, metric, [day]));
    const loaded = await Promise.all(METRIC_NAMES.map(async (metric) => (await tableRows(server, at, metric)).length));
    expect(loaded.reduce((sum, rows) => sum + rows, 0)).toBe(units.length * 18);
  });

  it('two runs on one database never interleave: the second waits for the lock and says who holds it', async () => {
    const at = await freshDatabase();
    const holder = await server.connect(at.database);
    try {
      await holder.query(`SELECT pg_advisory_lock(${0x414d4554}, hashtext($1) & 2147483647)`, [SCHEMA]);
      const waiting = startInProcess(['unique-users', ...auth(), '--date', TO, '-o', at.url]);
      await waitUntil(() => waiting.stderr().includes('waiting for it to end'), 'the run to wait for the lock');
      expect(waiting.stderr()).toMatch(/another run \(server pid \d+, .*\) is writing to postgresql:\/\/.*; waiting for it to end/);
      // SIGTERM ends a wait at once, the lock still held by the other.
      const interrupted = startInProcess(['traffic', ...auth(), '--date', TO, '-o', at.url]);
      await waitUntil(() => interrupted.stderr().includes('waiting for it to end'), 'the second run to wait for the lock');
      interrupted.kill('SIGTERM');
      expect((await interrupted.done).code).toBe(143);
      await holder.query(`SELECT pg_advisory_unlock(${0x414d4554}, hashtext($1) & 2147483647)`, [SCHEMA]);
      expect((await waiting.done).code).toBe(0);
    } finally {
      await holder.end();
    }

    // Two first runs at once on a database with no schema yet: the lock comes before the tables are made. The lock
    // held from outside forces the interleaving (both runs at the point where they wait) instead of hoping for it.
    const fresh = await freshDatabase();
    const gate = await server.connect(fresh.database);
    let both: CliResult[];
    try {
      await gate.query(`SELECT pg_advisory_lock(${0x414d4554}, hashtext($1) & 2147483647)`, [SCHEMA]);
      const runs = [0, 1].map(() => startInProcess(['all', ...auth(), '--from', FROM, '--to', TO, '-o', fresh.url]));
      for (const run of runs) await waitUntil(() => run.stderr().includes('waiting for it to end'), 'both runs to wait for the lock');
      // Both wait and neither has made anything: a lock taken after the schema would have left it here.
      const made = await gate.query('SELECT schema_name FROM information_schema.schemata WHERE schema_name = $1', [SCHEMA]);
      expect(made.rows).toEqual([]);
      await gate.query(`SELECT pg_advisory_unlock(${0x414d4554}, hashtext($1) & 2147483647)`, [SCHEMA]);
      both = await Promise.all(runs.map((run) => run.done));
    } finally {
      await gate.end();
    }
    for (const result of both) expect(result.code, result.stderr).toBe(0);
    // One ran first and wrote; the other ran after it, and found every unit as it was.
    expect(both.filter((result) => /9 unchanged/.test(result.stderr))).toHaveLength(1);
    for (const metric of METRIC_NAMES)
      expect(await tableRows(server, fresh, metric)).toEqual(sandboxRows(sandbox, metric, daysFrom(FROM, TO)));
  });
});

/** Whether a row's instant (its second field, in milliseconds) lies in the UTC day. */
function tableRowsOfDay(row: string, day: string): boolean {
  const ms = Number((JSON.parse(row) as string[])[1]);
  return ms >= Date.parse(`${day}T00:00:00Z`) && ms <= Date.parse(`${day}T23:59:59Z`);
}
