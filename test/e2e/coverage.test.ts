/**
 * The coverage a loader reads without running the tool: a simulated month imported into a folder and into a
 * PostgreSQL schema by the same command lines (a day never published and given up, one given up and then accepted, one
 * held as suspect, one not published yet, one reopened, yesterday not over), then `status --json`, the view
 * `area_metrics_coverage` and `_coverage/coverage.parquet` (read by DuckDB) agree day by day, and with the story.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { daysBetween } from '../../src/window/days.js';
import { DuckDb, sqlText } from '../helpers/duckdb.js';
import { startPostgres, warnIfPostgresMissing, type TestPostgres } from '../helpers/postgres.js';
import { clockedCli, daysBefore, noonToday } from '../helpers/sandbox-clock.js';
import { useTempDirs } from '../helpers/tmp.js';

const skip = warnIfPostgresMissing('the coverage view end-to-end test');
const SECRET = 'Coverage-S3cret-7c1e';
const CLOCK = noonToday();
const daysAgo = daysBefore(CLOCK);
const { runCli } = clockedCli(CLOCK, { AREA_METRICS_CLIENT_SECRET: SECRET });
const SCHEMA = 'lake';
const METRIC = 'unique-users';

/** The month's days and what happens to them. */
const FIRST = daysAgo(28);
const GIVEN_UP = daysAgo(20);
const ACCEPTED = daysAgo(18);
const REOPENED = daysAgo(10);
const HELD = daysAgo(8);
const NOT_PUBLISHED = daysAgo(3);
const YESTERDAY = daysAgo(1);

/** Each day's status and reason as the story makes it, written out: every other day of the month is complete. */
const STORY: Readonly<Record<string, string>> = {
  [GIVEN_UP]: 'given-up',
  [ACCEPTED]: 'accepted',
  [REOPENED]: 'pending reopened',
  [HELD]: 'held suspect',
  [NOT_PUBLISHED]: 'pending not-published',
  [YESTERDAY]: 'pending not-over',
};

let sandbox: Sandbox;
let server: TestPostgres;
const tempDir = useTempDirs('coverage-');

interface StatusJson {
  metrics: {
    key: string;
    firstDay: string;
    lastCompleteDay: string;
    pending: { day: string; reason: string }[];
    givenUp: [string, string][];
    accepted: [string, string][];
  }[];
}

/** Each day's status as `status --json` tells it: its lists, and complete for the other days up to the last complete one. */
function statusDays(json: StatusJson): Map<string, string> {
  const metric = json.metrics.find(({ key }) => key === METRIC)!;
  const days = new Map<string, string>();
  for (const day of daysBetween(metric.firstDay, metric.lastCompleteDay)) days.set(day, 'complete');
  for (const [first, last] of metric.givenUp) for (const day of daysBetween(first, last)) days.set(day, 'given-up');
  for (const [first, last] of metric.accepted) for (const day of daysBetween(first, last)) days.set(day, 'accepted');
  for (const { day, reason } of metric.pending) days.set(day, reason === 'suspect' ? 'held suspect' : `pending ${reason}`);
  return new Map([...days].sort(([a], [b]) => a.localeCompare(b)));
}

/** A row of the view or the file, each read with its day, rows and count as text. */
interface CoverageRecord {
  readonly metric: string;
  readonly stores: string | null;
  readonly day: string;
  readonly status: string;
  readonly reason: string | null;
  readonly rows: string | null;
  readonly loaded_at: unknown;
}

/** Each day's status and reason, as the story writes them. */
const described = (rows: readonly CoverageRecord[]): Map<string, string> =>
  new Map(rows.map((row) => [row.day, row.reason === null ? row.status : `${row.status} ${row.reason}`]));

/** The rows and load of each day, as text: `rows@` when a load time is there too, or `-`. */
const loads = (rows: readonly CoverageRecord[]): Map<string, string> =>
  new Map(rows.map((row) => [row.day, row.rows === null ? '-' : `${row.rows}${row.loaded_at === null ? '' : '@'}`]));

/** The same command lines against both outputs: the month's backfill, an accept, a reopen. */
async function simulateMonth(out: string): Promise<void> {
  const auth = ['--base-url', sandbox.url, '--client-id', sandbox.clientId, '-o', out];
  const backfill = await runCli([METRIC, ...auth, '--from', FIRST, '--to', YESTERDAY, '--give-up-days', '5']);
  expect(backfill.code, backfill.stderr).toBe(0);
  for (const settle of [
    ['accept', METRIC, '--date', ACCEPTED, '-o', out],
    ['reopen', METRIC, '--date', REOPENED, '-o', out],
  ]) {
    const result = await runCli(settle);
    expect(result.code, result.stderr).toBe(0);
  }
}

describe.skipIf(skip)('coverage as a table', () => {
  beforeAll(async () => {
    [sandbox, server] = await Promise.all([
      startSandbox({ port: 0, stores: 3, zones: 2, days: 30, clientSecret: SECRET, serveInProgress: true, now: () => CLOCK }),
      startPostgres(),
    ]);
    sandbox.setPublishing({
      hidden: [GIVEN_UP, ACCEPTED, NOT_PUBLISHED].map((day) => ({ day })),
      distorted: [{ day: HELD, factor: 0 }],
    });
  });
  afterAll(async () => {
    await Promise.all([sandbox?.close(), server?.stop()]);
  });

  it('status, the view and the coverage file agree day by day on a month with held, pending, accepted and given-up days', async () => {
    const folder = await tempDir();
    await server.query('CREATE DATABASE coverage');
    const database = server.url({ database: 'coverage', params: { schema: SCHEMA } });
    await simulateMonth(database);
    await simulateMonth(folder);

    const expected = new Map(daysBetween(FIRST, YESTERDAY).map((day) => [day, STORY[day] ?? 'complete']));
    // `status` of the database as a process would run it (the built binary), of the folder in this process.
    const statuses = await Promise.all([
      runCli(['status', '-o', folder, '--json']),
      runCli(['status', '-o', database, '--json'], { process: true }),
    ]);
    for (const status of statuses) expect(statusDays(JSON.parse(status.stdout) as StatusJson)).toEqual(expected);

    const view = await server.query<CoverageRecord>(
      `SELECT metric, stores, day::text AS day, status, reason, rows::text AS rows, loaded_at FROM ${SCHEMA}.area_metrics_coverage ORDER BY metric, day`,
      [],
      'coverage',
    );
    expect(described(view)).toEqual(expected);
    expect(view.every((row) => row.metric === METRIC && row.stores === null)).toBe(true);

    const duck = await DuckDb.open();
    const file = (await duck
      .rows(
        `SELECT metric, stores, day::text AS day, status, reason, rows::text AS rows, loaded_at FROM ${sqlText(join(folder, '_coverage', 'coverage.parquet'))} ORDER BY metric, day`,
      )
      .finally(() => duck.close())) as unknown as CoverageRecord[];
    expect(described(file)).toEqual(expected);
    expect(file.every((row) => row.metric === METRIC && row.stores === null)).toBe(true);

    // Rows and load times: the same in both, a day with no data (given up, accepted, not published) has none.
    expect(loads(file)).toEqual(loads(view));
    const dataRows = await server.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${SCHEMA}.unique_users`, [], 'coverage');
    const total = [...loads(view).values()].filter((value) => value !== '-').reduce((sum, value) => sum + Number.parseInt(value), 0);
    expect(total).toBe(Number(dataRows[0]!.n));
    for (const day of [GIVEN_UP, ACCEPTED, NOT_PUBLISHED]) expect(loads(view).get(day)).toBe('-');
    for (const day of [HELD, REOPENED, FIRST]) expect(loads(view).get(day)).toMatch(/^[1-9]\d*@$/);
  });
});
