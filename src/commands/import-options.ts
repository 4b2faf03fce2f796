import { OUTPUT_FORMATS, type OutputShape } from '../output/format.js';
import { LAYOUTS } from '../output/layout.js';
import { SUSPECT_MODES } from '../state/judgement/suspect.js';
import { parseLineageUrl } from '../lineage/settings.js';
import { DAY_MODES } from '../window/day-mode.js';
import type { LogFormat } from '../log/logger.js';
import type { MetricName } from '../metrics/names.js';
import { DEFAULT_MAX_RESULTS } from '../metrics/unit-bounds.js';
import { integer, listOption, oneOf, switchOption, valueOption, type OptionValues } from './options.js';
import { API_OPTIONS, IMPORT_REQUEST_BUDGET, OUTPUT_OPTIONS, path, requestBudgetOptions } from './shared-options.js';
import { WINDOW_OPTIONS } from './window-flags.js';

const OUTPUT_SHAPES = ['rows', 'results'] as const satisfies readonly OutputShape[];
const LOG_FORMATS = ['text', 'json'] as const satisfies readonly LogFormat[];
const ON_INVALID = ['fail', 'skip'] as const;

/**
 * The options of the four import commands: one table drives commander, `--help`, the env fallbacks and the
 * parsers; `resolveImportConfig` adds the rules between options.
 */
export const IMPORT_OPTIONS = {
  ...API_OPTIONS,
  days: valueOption({
    flags: '--days <mode>',
    env: 'AREA_METRICS_DAYS',
    parse: oneOf(DAY_MODES),
    choices: DAY_MODES,
    defaultText: "the state's, else utc",
    description: "utc: a file per UTC day (the vendor's windows); local: a file per store-local calendar day. An output folder keeps one",
  }),
  ...WINDOW_OPTIONS,
  catchUp: switchOption({
    flags: '--catch-up',
    description:
      'for each metric, its pending days and every day after its own last complete day in the state, through yesterday (with --days local, the latest local day over everywhere)',
  }),
  maxDays: valueOption({
    flags: '--max-days <n>',
    parse: integer(1, 3660),
    default: 31,
    description:
      'at most this many new days per metric for --catch-up, and at most this many pending days retried beside them; a cut says so',
  }),
  lookback: valueOption({
    flags: '--lookback <n>',
    parse: integer(0, 366),
    default: 0,
    description: 'with --catch-up: also re-import the n complete days before, for late corrections',
  }),
  settleDays: valueOption({
    flags: '--settle-days <n>',
    parse: integer(1, 3660),
    default: 3,
    description: 'a day this many days old is final even if some stores never reported',
  }),
  giveUpDays: valueOption({
    flags: '--give-up-days <n>',
    parse: integer(1, 3660),
    default: 14,
    description: 'a day still unpublished this many days after its window ended is given up (one warning; status lists it)',
  }),
  onSuspect: valueOption({
    flags: '--on-suspect <mode>',
    env: 'AREA_METRICS_ON_SUSPECT',
    parse: oneOf(SUSPECT_MODES),
    choices: SUSPECT_MODES,
    default: 'hold',
    description:
      "a day whose numbers look wrong, each store against its own same weekday of the 8 weeks before (a store at zero where it is open, far outside its range, or most stores moved by one factor; a store's weekly closing day is its normal), a correction of a final day too: hold it pending, warn and record it, or off",
  }),
  store: listOption({
    flags: '--store <code>',
    parse: path('a non-empty store code'),
    description: 'only this store_code; repeatable (one unit per store)',
  }),
  ...OUTPUT_OPTIONS,
  layout: valueOption({
    flags: '--layout <layout>',
    env: 'AREA_METRICS_LAYOUT',
    parse: oneOf(LAYOUTS),
    choices: LAYOUTS,
    defaultText: "the state's, else flat",
    description:
      'flat: <metric>/<day>.<ext>; hive: metric=<metric>/dt=<day>/<metric>_<day>.<ext>, partitions a lake reads as columns. An output keeps one',
  }),
  openlineageUrl: valueOption({
    flags: '--openlineage-url <url>',
    env: 'OPENLINEAGE_URL',
    parse: parseLineageUrl,
    description:
      'post OpenLineage run events to <url>/api/v1/lineage (OPENLINEAGE_API_KEY, OPENLINEAGE_NAMESPACE as the OpenLineage clients read them)',
  }),
  format: valueOption({
    flags: '-f, --format <format>',
    env: 'AREA_METRICS_FORMAT',
    parse: oneOf(OUTPUT_FORMATS),
    choices: OUTPUT_FORMATS,
    defaultText: "the state's, else csv for files; ndjson for stdout",
    description: 'file format. An output folder keeps one',
  }),
  shape: valueOption({
    flags: '--shape <shape>',
    parse: oneOf(OUTPUT_SHAPES),
    choices: OUTPUT_SHAPES,
    default: 'rows',
    description: 'rows: one record per store, day and zone; results: one NDJSON line per API result',
  }),
  pageSize: valueOption({ flags: '--page-size <n>', parse: integer(1, 10_000), default: 1000, description: 'results per page, 1..10000' }),
  concurrency: valueOption({
    flags: '--concurrency <n>',
    parse: integer(1, 64),
    default: 4,
    description: 'units (metric x day x store) fetched at once: a cap, not a target',
  }),
  maxResults: valueOption({
    flags: '--max-results <n>',
    env: 'AREA_METRICS_MAX_RESULTS',
    parse: integer(1, 1_000_000_000),
    default: DEFAULT_MAX_RESULTS,
    description: "the most results a unit (a metric's day) may have; its pages and a page's bytes are bounded by it and --page-size",
  }),
  ...requestBudgetOptions(IMPORT_REQUEST_BUDGET),
  onInvalid: valueOption({
    flags: '--on-invalid <mode>',
    parse: oneOf(ON_INVALID),
    choices: ON_INVALID,
    default: 'fail',
    description: 'a record that breaks the data contract fails the unit, or is set aside in _rejected/',
  }),
  dryRun: switchOption({ flags: '--dry-run', description: 'print the requests it would make (no credentials needed) and exit' }),
  quiet: switchOption({ flags: '-q, --quiet', description: 'print errors only' }),
  verbose: switchOption({ flags: '-v, --verbose', description: 'also log every page fetched and every retry' }),
  logFormat: valueOption({
    flags: '--log-format <format>',
    parse: oneOf(LOG_FORMATS),
    choices: LOG_FORMATS,
    default: 'text',
    description: 'stderr as text lines or one JSON object per line',
  }),
};
export type ImportOptions = OptionValues<typeof IMPORT_OPTIONS>;

/** An import command: one per metric, and `all`. */
export type ImportCommandName = MetricName | 'all';

/** What an import command's `--help` shows after its options. */
export function importHelp(name: string): string {
  return `
Examples:
  # yesterday (UTC), from cron; credentials from the environment
  $ area-metrics ${name} --base-url https://analytics.vendor.example
  # backfill a week into NDJSON files (GNU date counts the days back from today)
  $ area-metrics ${name} --from $(date -u -d '8 days ago' +%F) --to $(date -u -d '2 days ago' +%F) -f ndjson -o ./data
  # typed Parquet files for a warehouse (files only; a folder keeps one format)
  $ area-metrics ${name} --from $(date -u -d '8 days ago' +%F) --to $(date -u -d '2 days ago' +%F) -f parquet -o ./lake
  # nightly: each metric from its own last complete day, plus 2 days again for late corrections
  $ area-metrics ${name} --catch-up --lookback 2
  # into an S3-compatible bucket, the state beside the data (credentials from the AWS SDK's default chain)
  $ area-metrics ${name} --catch-up -o s3://my-bucket/area-metrics
  # into PostgreSQL: a typed table per metric, each day replaced in one transaction (password from PGPASSWORD or ~/.pgpass)
  $ area-metrics ${name} --catch-up -o 'postgresql://loader@db:5432/analytics?schema=area_metrics'
  # partitions a lake reads as columns (metric=.../dt=...), lineage events to Marquez
  $ OPENLINEAGE_URL=http://marquez:5000 area-metrics ${name} --catch-up --layout hive -f parquet -o s3://my-bucket/area-metrics
  # stream to another tool
  $ area-metrics ${name} --date $(date -u -d '2 days ago' +%F) -o - | jq -c .

Exit codes: 0 every unit imported, 2 bad options or configuration, 3 credentials rejected, 4 API unreachable or
failing after retries, 5 data contract violation, 6 incomplete data after re-fetching, 7 output could not be
written, 130/143 interrupted (SIGINT/SIGTERM); with failed units, the code of the first in (metric, day, store) order.
`;
}
