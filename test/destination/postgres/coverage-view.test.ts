import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COVERAGE_VIEW, ensureCoverageView } from '../../../src/destination/postgres/coverage-view.js';
import { ensureSchema } from '../../../src/destination/postgres/tables.js';
import { coverageDaysOfText } from '../../../src/state/coverage-rows.js';
import { startPostgres, warnIfPostgresMissing, type TestPostgres } from '../../helpers/postgres.js';

/**
 * The view `area_metrics_coverage` against a real server: the same days as the state's text gives in TypeScript,
 * each with its rows and load time from the unit coverage; made in place in a schema of an earlier release; a role
 * that may not make it is warned and goes on; a reader needs only USAGE and SELECT on the view.
 */
const skip = warnIfPostgresMissing('the coverage view tests');
const DATABASE = 'coverage_view';
const PASSWORD = 'View-Test-Pw-3';

let server: TestPostgres;

/** A connection as `user` (the superuser by default). */
async function connectAs(user?: string): Promise<pg.Client> {
  if (user === undefined) return server.connect(DATABASE);
  const client = new pg.Client({ host: server.host, port: server.port, user, password: PASSWORD, database: DATABASE });
  await client.connect();
  return client;
}

async function withClient<T>(user: string | undefined, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectAs(user);
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A state as this release writes it: a whole metric's key and a `--store` key, every kind of day, and more besides. */
const STATE = JSON.stringify({
  version: 5,
  storeSets: {},
  metrics: {
    traffic: {
      complete: [
        ['2026-10-30', '2026-11-01'],
        ['2026-11-04', '2026-11-04'],
      ],
      accepted: [['2026-11-02', '2026-11-02']],
      givenUp: [['2026-11-05', '2026-11-05']],
      pending: { '2026-11-03': { reason: 'suspect', measure: 'sum', value: 0, allZero: true }, '2026-11-06': { reason: 'not-over' } },
      stores: 2,
      storeFigures: { '2026-11-01': ['x', 'AAAA'] },
    },
    'unique-users[store=S1,S2]': { complete: [['2026-11-01', '2026-11-01']], pending: { '2026-11-02': { reason: 'interrupted' } } },
  },
});

describe.skipIf(skip)('the coverage view', () => {
  beforeAll(async () => {
    server = await startPostgres();
    await server.query(`CREATE DATABASE ${DATABASE}`);
    for (const role of ['loader', 'dashboard']) await server.query(`CREATE ROLE ${role} LOGIN PASSWORD '${PASSWORD}'`);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("has the state's days as the TypeScript definition makes them, with rows and load time from the unit coverage", async () => {
    const rows = await withClient(undefined, async (client) => {
      await ensureSchema(client, 'days');
      expect(await ensureCoverageView(client, 'days')).toBeUndefined();
      await client.query("INSERT INTO days.area_metrics_state (name, body) VALUES ('state', $1)", [STATE]);
      // The whole metric's unit of a day, and two stores' units of the --store key's day (a third store is not its).
      await client.query(
        'INSERT INTO days.area_metrics_units (metric, day, store, sha256, rows, bytes, loaded_at) VALUES ' +
          "('traffic', '2026-11-01', '', 'h', 40, 1, '2026-11-02T05:00:00Z'), " +
          "('traffic', '2026-11-03', '', 'h', 12, 1, '2026-11-04T05:00:00Z'), " +
          "('unique-users', '2026-11-01', 'S1', 'h', 3, 1, '2026-11-02T05:00:00Z'), " +
          "('unique-users', '2026-11-01', 'S2', 'h', 4, 1, '2026-11-02T06:00:00Z'), " +
          "('unique-users', '2026-11-01', 'S3', 'h', 9, 1, '2026-11-02T07:00:00Z')",
      );
      return (
        await client.query<Record<string, string | null>>(
          `SELECT metric, stores, day::text AS day, status, reason, rows::text AS rows, to_char(loaded_at AT TIME ZONE 'UTC', 'HH24:MI') AS at ` +
            `FROM days.${COVERAGE_VIEW} ORDER BY metric, stores NULLS FIRST, day`,
        )
      ).rows;
    });
    const fromText = coverageDaysOfText(STATE).sort((a, b) => (a.metric + a.day < b.metric + b.day ? -1 : 1));
    expect(rows.map(({ metric, stores, day, status, reason }) => ({ metric, stores, day, status, reason }))).toEqual(fromText);
    expect(rows.filter((row) => row.rows !== null).map(({ metric, day, rows: count, at }) => `${metric} ${day} ${count} ${at}`)).toEqual([
      'traffic 2026-11-01 40 05:00',
      'traffic 2026-11-03 12 05:00',
      'unique-users 2026-11-01 7 06:00',
    ]);
  });

  it("is made in place in an earlier release's schema; a role that may not make it is warned and goes on; a reader needs USAGE and SELECT on it", async () => {
    await withClient(undefined, async (client) => {
      // An earlier release's schema: the tables, no view; the loader has rights on the tables only.
      await ensureSchema(client, 'earlier');
      await client.query('GRANT USAGE ON SCHEMA earlier TO loader');
      await client.query('GRANT SELECT, INSERT, DELETE ON ALL TABLES IN SCHEMA earlier TO loader');
    });
    const warning = await withClient('loader', (client) => ensureCoverageView(client, 'earlier'));
    expect(warning).toMatch(
      /^the coverage view earlier\.area_metrics_coverage does not exist and this role may not make it \(permission denied.*\); run one import as a role with CREATE on the schema/,
    );

    // The owner's next run makes it; the loader's runs then find it as it is.
    expect(await withClient(undefined, (client) => ensureCoverageView(client, 'earlier'))).toBeUndefined();
    expect(await withClient('loader', (client) => ensureCoverageView(client, 'earlier'))).toBeUndefined();

    await withClient(undefined, async (client) => {
      await client.query("INSERT INTO earlier.area_metrics_state (name, body) VALUES ('state', $1)", [STATE]);
      // A complete day loaded, and a held one loaded later: freshness is the complete day's.
      await client.query(
        'INSERT INTO earlier.area_metrics_units (metric, day, store, sha256, rows, bytes, loaded_at) VALUES ' +
          "('traffic', '2026-11-01', '', 'h', 40, 1, '2026-11-02T05:00:00Z'), ('traffic', '2026-11-03', '', 'h', 12, 1, '2026-11-04T05:00:00Z')",
      );
      await client.query(`GRANT USAGE ON SCHEMA earlier TO dashboard; GRANT SELECT ON earlier.${COVERAGE_VIEW} TO dashboard`);
    });
    await withClient('dashboard', async (client) => {
      // dbt's source freshness as docs/coverage.md writes it: the latest load of a complete day of the whole metric.
      const fresh = await client.query<{ at: Date | null }>(
        `select max(loaded_at) AS at from earlier.${COVERAGE_VIEW} where metric = 'traffic' and stores is null and status = 'complete'`,
      );
      expect(fresh.rows[0]?.at?.toISOString()).toBe('2026-11-02T05:00:00.000Z');
      // The view is all it may read: the state itself stays closed to it.
      await expect(client.query('SELECT body FROM earlier.area_metrics_state')).rejects.toThrow(/permission denied/);
    });
  });
});
