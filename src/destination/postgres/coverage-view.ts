import type { Client } from 'pg';
import { HELD_REASON, RANGE_STATUSES } from '../../state/coverage-rows.js';
import { OWN_TABLES, quoteName } from './tables.js';

/** The view loaders, dbt and dashboards read a schema's coverage from, day by day. */
export const COVERAGE_VIEW = 'area_metrics_coverage';

/** Its comment names its definition: a run made by a release with another one replaces it. */
const VIEW_VERSION = 'area-metrics coverage view 1';

/** A text constant as SQL (the few used here are the tool's own words). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** The function that expands a state's JSON into its days, beside the view. */
export const COVERAGE_DAYS_FUNCTION = 'area_metrics_coverage_days';

/**
 * The SQL that makes the view: a function expanding the state's day lists to one row a day (`generate_series` over
 * each range, each pending day with its reason), the same rows as `coverageDays` makes from the state, and the view
 * over the state row, each day joined to its rows and latest load time in the per-unit coverage table, committed with
 * the data: the whole metric's unit (store ''), or the units of a `--store` key's stores. It reads the state row as it
 * is, so it is true after every state write, with no copy to keep in step.
 *
 * The expansion is a function only for the planner: on the bare set-returning functions it guesses millions of rows,
 * and the server then compiles the query (JIT) for longer than it takes to run it; the function says a thousand rows
 * and runs without JIT. It reads nothing but its argument, so a reader needs no right on the state.
 */
export function coverageViewSql(schema: string): string[] {
  const at = (name: string): string => `${quoteName(schema)}.${name}`;
  const lists = RANGE_STATUSES.map(({ list, status }) => `(${literal(list)}, ${literal(status)})`).join(', ');
  const days = `CREATE OR REPLACE FUNCTION ${at(COVERAGE_DAYS_FUNCTION)}(state jsonb)
RETURNS TABLE (metric text, stores text, day date, status text, reason text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 1000 SET jit = off AS $days$
WITH entries AS (
  SELECT k.key, k.entry FROM jsonb_each($1 -> 'metrics') AS k(key, entry)
), days AS (
  SELECT e.key, d::date AS day, l.status, NULL::text AS reason
  FROM entries e
  CROSS JOIN (VALUES ${lists}) AS l(list, status)
  CROSS JOIN LATERAL jsonb_array_elements(COALESCE(e.entry -> l.list, '[]'::jsonb)) AS r(range)
  CROSS JOIN LATERAL generate_series((r.range ->> 0)::date, (r.range ->> 1)::date, interval '1 day') AS d
  UNION ALL
  SELECT e.key, p.day::date, CASE WHEN p.pending ->> 'reason' = ${literal(HELD_REASON)} THEN 'held' ELSE 'pending' END, p.pending ->> 'reason'
  FROM entries e CROSS JOIN LATERAL jsonb_each(COALESCE(e.entry -> 'pending', '{}'::jsonb)) AS p(day, pending)
)
SELECT split_part(key, '[', 1),
  CASE WHEN strpos(key, '[') = 0 THEN NULL ELSE substr(key, strpos(key, '[') + 7, length(key) - strpos(key, '[') - 7) END,
  day, status, reason
FROM days
$days$`;
  const view = `CREATE OR REPLACE VIEW ${at(COVERAGE_VIEW)} AS
SELECT p.metric, p.stores, p.day, p.status, p.reason, u.rows, u.loaded_at
FROM ${at(OWN_TABLES.state)} s
CROSS JOIN LATERAL ${at(COVERAGE_DAYS_FUNCTION)}(s.body::jsonb) p
CROSS JOIN LATERAL (
  SELECT sum(c.rows)::bigint AS rows, max(c.loaded_at) AS loaded_at
  FROM ${at(OWN_TABLES.units)} c
  WHERE c.metric = p.metric AND c.day = p.day
    AND CASE WHEN p.stores IS NULL THEN c.store = '' ELSE c.store = ANY (string_to_array(p.stores, ',')) END
) u
WHERE s.name = 'state'`;
  return [days, view];
}

/** PostgreSQL's SQLSTATE for a statement the role may not run. */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * The view, made or replaced when it is missing or another release made it, like the tool's tables: once per
 * release that changes it, which needs CREATE on the schema (and ownership of the view); a run of a role given only
 * rights on the tables finds it in place and changes nothing. A role that may not make it is told so in the returned
 * warning, and the import goes on: the data does not need the view.
 */
export async function ensureCoverageView(client: Client, schema: string): Promise<string | undefined> {
  const { rows } = await client.query<{ comment: string | null }>(
    'SELECT obj_description(c.oid, $3) AS comment FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace ' +
      "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'v'",
    [schema, COVERAGE_VIEW, 'pg_class'],
  );
  if (rows[0]?.comment === VIEW_VERSION) return undefined;
  try {
    for (const statement of coverageViewSql(schema)) await client.query(statement);
    await client.query(`COMMENT ON VIEW ${quoteName(schema)}.${COVERAGE_VIEW} IS ${literal(VIEW_VERSION)}`);
    return undefined;
  } catch (error) {
    if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    const what = rows.length === 0 ? 'does not exist' : 'is of another release';
    return (
      `the coverage view ${schema}.${COVERAGE_VIEW} ${what} and this role may not make it (${(error as Error).message}); ` +
      'run one import as a role with CREATE on the schema (its owner) to make it; the import goes on without it'
    );
  }
}
