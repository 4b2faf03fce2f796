import { UsageError } from '../errors.js';
import type { ClientCredentials } from '../fetch/basic-auth.js';
import { parseBaseUrl } from '../fetch/urls.js';
import { DEFAULT_MAX_WAIT_MS, PACE_FLOOR_RPS } from '../fetch/wait-cap.js';
import { DEFAULT_MAX_RESULTS } from '../metrics/unit-bounds.js';
import type { LogFormat, LogLevel } from '../log/logger.js';
import type { OutputFormat, OutputShape } from '../output/format.js';
import { LAYOUTS, type Layout } from '../output/layout.js';
import { isObjectUrl, parseObjectUrl, type ObjectLocation } from '../output/object-location.js';
import { SUSPECT_MODES, type SuspectMode } from '../state/suspect.js';
import { LINEAGE_ENV, parseLineageUrl, resolveLineageSettings, type LineageSettings } from '../lineage/settings.js';
import type { WindowRequest } from '../window/days.js';
import { DAY_MODES, type DayMode } from '../window/day-mode.js';
import {
  envValue,
  givenBy,
  integer,
  listOption,
  oneOf,
  readOptions,
  seconds,
  switchOption,
  text,
  valueOption,
  type CollectedOptions,
  type OptionValues,
  type Parser,
} from './options.js';
import { resolveClientSecret } from './settings.js';
import { WINDOW_OPTIONS, windowFromFlags } from './window-flags.js';

const OUTPUT_FORMATS = ['csv', 'ndjson', 'parquet'] as const satisfies readonly OutputFormat[];
const OUTPUT_SHAPES = ['rows', 'results'] as const satisfies readonly OutputShape[];
const LOG_FORMATS = ['text', 'json'] as const satisfies readonly LogFormat[];
const ON_INVALID = ['fail', 'skip'] as const;

/** `-` (stdout), `s3://bucket/prefix` (checked now) or a folder; blank would quietly mean the current folder. */
const outputPath: Parser<string> = (value, source) => {
  if (value.trim() === '') throw new UsageError('-o/--output needs a folder, s3://bucket/prefix, or - for stdout');
  if (isObjectUrl(value)) parseObjectUrl(value, source);
  return value;
};

/** A state file, or an object named by a full `s3://bucket/key`. */
const stateFileOrObject: Parser<string> = (value, source) => {
  if (value.trim() === '') throw new UsageError(`${source} needs a file path or s3://bucket/key`);
  if (isObjectUrl(value) && parseObjectUrl(value, source).prefix === '') {
    throw new UsageError(`${source} ${JSON.stringify(value)} names a bucket but no object; write s3://bucket/path/state.json`);
  }
  return value;
};

/** Text that names a path: blank would quietly mean the current folder. */
function path(what: string): Parser<string> {
  return (value, source) => {
    if (value.trim() === '') throw new UsageError(`${source} needs ${what}`);
    return value;
  };
}

/** Requests a second: a decimal (`10`, `0.5`) from the pace floor (0.1) to 10,000. */
const requestsPerSecond: Parser<number> = (value, source) => {
  const rate = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(rate >= PACE_FLOOR_RPS && rate <= 10_000)) {
    throw new UsageError(`${source} ${JSON.stringify(value)} must be a number of requests a second from ${PACE_FLOOR_RPS} to 10000`);
  }
  return rate;
};

/** Shared with the commands that only read or settle the state (status, accept, reopen). */
export const S3_FORCE_PATH_STYLE = switchOption({
  flags: '--s3-force-path-style',
  env: 'AREA_METRICS_S3_FORCE_PATH_STYLE',
  description: 'path-style bucket addressing (host/bucket/key), which most S3-compatible stores need',
});

/**
 * The options of the four import commands: one table drives commander, `--help`, the env fallbacks and the
 * parsers; `resolveImportConfig` adds the rules between options.
 */
export const IMPORT_OPTIONS = {
  baseUrl: valueOption({ flags: '--base-url <url>', env: 'AREA_METRICS_BASE_URL', parse: text, description: 'API root; requests go to {base}/api/bi/area-metrics/<metric>/ (required)' }),
  clientId: valueOption({ flags: '--client-id <id>', env: 'AREA_METRICS_CLIENT_ID', parse: text, description: 'Basic-auth user (required)' }),
  clientSecret: valueOption({ flags: '--client-secret <secret>', env: 'AREA_METRICS_CLIENT_SECRET', parse: text, description: 'Basic-auth password (or --client-secret-file)' }),
  clientSecretFile: valueOption({ flags: '--client-secret-file <path>', env: 'AREA_METRICS_CLIENT_SECRET_FILE', parse: path('a file path'), description: 'read the secret from a file (trailing newline trimmed)' }),
  days: valueOption({
    flags: '--days <mode>',
    env: 'AREA_METRICS_DAYS',
    parse: oneOf(DAY_MODES),
    choices: DAY_MODES,
    default: 'utc',
    description: "utc: a file per UTC day (the vendor's windows); local: a file per store-local calendar day. An output folder keeps one",
  }),
  ...WINDOW_OPTIONS,
  catchUp: switchOption({ flags: '--catch-up', description: "for each metric, its pending days and every day after its own last complete day in the state, through yesterday (with --days local, the latest local day over everywhere)" }),
  maxDays: valueOption({ flags: '--max-days <n>', parse: integer(1, 3660), default: 31, description: 'at most this many new days per metric for --catch-up, and at most this many pending days retried beside them; a cut says so' }),
  lookback: valueOption({ flags: '--lookback <n>', parse: integer(0, 366), default: 0, description: 'with --catch-up: also re-import the n complete days before, for late corrections' }),
  settleDays: valueOption({ flags: '--settle-days <n>', parse: integer(1, 3660), default: 3, description: 'a day this many days old is final even if some stores never reported' }),
  giveUpDays: valueOption({ flags: '--give-up-days <n>', parse: integer(1, 3660), default: 14, description: 'a day still unpublished this many days after its window ended is given up (one warning; status lists it)' }),
  onSuspect: valueOption({
    flags: '--on-suspect <mode>',
    env: 'AREA_METRICS_ON_SUSPECT',
    parse: oneOf(SUSPECT_MODES),
    choices: SUSPECT_MODES,
    default: 'hold',
    description: 'a complete day whose numbers look wrong (all zero, or a total far from the median of the 4 weeks before): hold it pending, warn and record it, or off',
  }),
  store: listOption({ flags: '--store <code>', parse: path('a non-empty store code'), description: 'only this store_code; repeatable (one unit per store)' }),
  output: valueOption({ flags: '-o, --output <dir|s3://bucket/prefix|->', env: 'AREA_METRICS_OUTPUT', parse: outputPath, default: './area-metrics-data', description: 'output folder, an S3-compatible bucket and prefix, or - for stdout' }),
  s3ForcePathStyle: S3_FORCE_PATH_STYLE,
  layout: valueOption({
    flags: '--layout <layout>',
    env: 'AREA_METRICS_LAYOUT',
    parse: oneOf(LAYOUTS),
    choices: LAYOUTS,
    default: 'flat',
    description: 'flat: <metric>/<day>.<ext>; hive: metric=<metric>/dt=<day>/<metric>_<day>.<ext>, partitions a lake reads as columns. An output keeps one',
  }),
  openlineageUrl: valueOption({
    flags: '--openlineage-url <url>',
    env: 'OPENLINEAGE_URL',
    parse: parseLineageUrl,
    description: 'post OpenLineage run events to <url>/api/v1/lineage (OPENLINEAGE_API_KEY, OPENLINEAGE_NAMESPACE as the OpenLineage clients read them)',
  }),
  format: valueOption({ flags: '-f, --format <format>', parse: oneOf(OUTPUT_FORMATS), choices: OUTPUT_FORMATS, defaultText: 'csv for files, ndjson for stdout', description: 'file format' }),
  shape: valueOption({ flags: '--shape <shape>', parse: oneOf(OUTPUT_SHAPES), choices: OUTPUT_SHAPES, default: 'rows', description: 'rows: one record per store, day and zone; results: one NDJSON line per API result' }),
  pageSize: valueOption({ flags: '--page-size <n>', parse: integer(1, 10_000), default: 1000, description: 'results per page, 1..10000' }),
  concurrency: valueOption({ flags: '--concurrency <n>', parse: integer(1, 64), default: 4, description: 'units (metric x day x store) fetched at once: a cap, not a target' }),
  maxRps: valueOption({ flags: '--max-rps <n>', env: 'AREA_METRICS_MAX_RPS', parse: requestsPerSecond, description: "at most n requests a second, for a vendor's documented limit (the run also adapts to the vendor's answers)" }),
  maxWait: valueOption({
    flags: '--max-wait <seconds>',
    env: 'AREA_METRICS_MAX_WAIT',
    parse: seconds(3600),
    default: DEFAULT_MAX_WAIT_MS,
    defaultText: String(DEFAULT_MAX_WAIT_MS / 1000),
    description: 'the longest wait the vendor may ask for (Retry-After, a reset, a window); asking for more twice ends the run (exit 4)',
  }),
  maxResults: valueOption({
    flags: '--max-results <n>',
    env: 'AREA_METRICS_MAX_RESULTS',
    parse: integer(1, 1_000_000_000),
    default: DEFAULT_MAX_RESULTS,
    description: "the most results a unit (a metric's day) may have; its pages and a page's bytes are bounded by it and --page-size",
  }),
  retries: valueOption({ flags: '--retries <n>', parse: integer(0, 20), default: 5, description: 'retries per request on network errors, timeouts, 429 and 5xx' }),
  timeout: valueOption({ flags: '--timeout <seconds>', parse: seconds(3600), default: 60_000, defaultText: '60', description: 'per-request timeout' }),
  onInvalid: valueOption({ flags: '--on-invalid <mode>', parse: oneOf(ON_INVALID), choices: ON_INVALID, default: 'fail', description: 'a record that breaks the data contract fails the unit, or is set aside in _rejected/' }),
  state: valueOption({ flags: '--state <file|s3://bucket/key>', parse: stateFileOrObject, defaultText: '<output>/.area-metrics-state.json', description: 'state file (or object) for --catch-up and status' }),
  dryRun: switchOption({ flags: '--dry-run', description: 'print the requests it would make (no credentials needed) and exit' }),
  quiet: switchOption({ flags: '-q, --quiet', description: 'print errors only' }),
  verbose: switchOption({ flags: '-v, --verbose', description: 'also log every page fetched and every retry' }),
  logFormat: valueOption({ flags: '--log-format <format>', parse: oneOf(LOG_FORMATS), choices: LOG_FORMATS, default: 'text', description: 'stderr as text lines or one JSON object per line' }),
};

export type ImportOptions = OptionValues<typeof IMPORT_OPTIONS>;

export type OutputTarget =
  | { readonly kind: 'files'; readonly dir: string }
  | { readonly kind: 'objects'; readonly url: string; readonly location: ObjectLocation }
  | { readonly kind: 'stdout' };

export interface ImportConfig {
  readonly baseUrl: URL;
  /** Absent only for --dry-run, which needs none. */
  readonly credentials?: ClientCredentials;
  /** The secret came as `--client-secret`, visible to every user of the machine: the run warns once. */
  readonly secretOnCommandLine: boolean;
  readonly window: WindowRequest | { readonly kind: 'catch-up'; readonly maxDays: number; readonly lookback: number };
  /** UTC days or store-local calendar days. */
  readonly dayMode: DayMode;
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly onSuspect: SuspectMode;
  readonly storeCodes: readonly string[];
  readonly output: OutputTarget;
  /** How files are named under a folder or bucket prefix; stdout has none. */
  readonly layout: Layout;
  /** Where and as whom the run posts its OpenLineage events; absent: none. */
  readonly lineage?: LineageSettings;
  readonly format: OutputFormat;
  readonly shape: OutputShape;
  readonly pageSize: number;
  readonly concurrency: number;
  /** `--max-rps`: the pace's cap, requests a second. */
  readonly maxRps?: number;
  /** `--max-wait`: the cap on every wait the vendor asks for. */
  readonly maxWaitMs: number;
  /** `--max-results`: a unit's bound, from which its pages and a page's bytes are bounded. */
  readonly maxResults: number;
  readonly retries: number;
  readonly timeoutMs: number;
  readonly onInvalid: 'fail' | 'skip';
  /** A file path or an `s3://bucket/key` URL. */
  readonly statePath?: string;
  readonly s3ForcePathStyle: boolean;
  readonly dryRun: boolean;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/** Everything a run needs, checked before any request: a bad flag is exit 2 with one line naming the fix. */
export async function resolveImportConfig(collected: CollectedOptions, env: NodeJS.ProcessEnv, metricCount: number): Promise<ImportConfig> {
  const options = readOptions(IMPORT_OPTIONS, collected, env);
  const named = windowFromFlags(options);
  const { catchUp } = options;
  if (catchUp && named !== undefined) throw new UsageError('--catch-up cannot be combined with --date or --from/--to');
  if (!catchUp && givenBy(IMPORT_OPTIONS.lookback, collected, env) !== undefined) {
    throw new UsageError('--lookback needs --catch-up (a backfill names its days with --from/--to)');
  }
  const window: ImportConfig['window'] = catchUp ? { kind: 'catch-up', maxDays: options.maxDays, lookback: options.lookback } : (named ?? { kind: 'default' });

  if (options.baseUrl === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(options.baseUrl);

  const output: OutputTarget =
    options.output === '-'
      ? { kind: 'stdout' }
      : isObjectUrl(options.output)
        ? { kind: 'objects', url: options.output, location: parseObjectUrl(options.output, '-o/--output') }
        : { kind: 'files', dir: options.output };
  const { shape } = options;
  const format = options.format ?? (output.kind === 'stdout' || shape === 'results' ? 'ndjson' : 'csv');
  if (shape === 'results' && format !== 'ndjson') throw new UsageError(`--shape results is NDJSON only, not ${format}; use --format ndjson`);
  if (output.kind === 'stdout' && format === 'parquet') throw new UsageError('Parquet is written to files only (a reader needs the whole file); use -o <dir>');
  if (output.kind === 'stdout' && format === 'csv' && metricCount > 1) {
    throw new UsageError('CSV on stdout needs a single metric (their columns differ); use --format ndjson or -o <dir>');
  }
  const { state: statePath } = options;
  if (output.kind === 'stdout' && givenBy(IMPORT_OPTIONS.layout, collected, {}) === 'flag') {
    throw new UsageError('--layout names files in a folder or bucket; stdout (-o -) has none');
  }
  if (catchUp && output.kind === 'stdout' && statePath === undefined) {
    throw new UsageError('--catch-up with -o - needs --state <file> to remember the last complete day');
  }
  const lineageEnv = Object.fromEntries(Object.entries(LINEAGE_ENV).map(([key, name]) => [key, envValue(env, name)]));
  const lineage = resolveLineageSettings(options.openlineageUrl, lineageEnv);
  if (options.quiet && options.verbose) throw new UsageError('--quiet and --verbose contradict each other; pick one');
  // Credentials last: every other mistake is reported first, and --dry-run needs none.
  const credentials = options.dryRun ? undefined : await resolveCredentials(options, collected, env);

  return {
    baseUrl,
    ...(credentials ? { credentials } : {}),
    secretOnCommandLine: credentials !== undefined && givenBy(IMPORT_OPTIONS.clientSecret, collected, {}) === 'flag',
    window,
    dayMode: options.days,
    settleDays: options.settleDays,
    giveUpDays: options.giveUpDays,
    onSuspect: options.onSuspect,
    storeCodes: [...new Set(options.store)],
    output,
    layout: options.layout,
    ...(lineage === undefined ? {} : { lineage }),
    format,
    shape,
    pageSize: options.pageSize,
    concurrency: options.concurrency,
    ...(options.maxRps === undefined ? {} : { maxRps: options.maxRps }),
    maxWaitMs: options.maxWait,
    maxResults: options.maxResults,
    retries: options.retries,
    timeoutMs: options.timeout,
    onInvalid: options.onInvalid,
    ...(statePath === undefined ? {} : { statePath }),
    s3ForcePathStyle: options.s3ForcePathStyle,
    dryRun: options.dryRun,
    logLevel: options.quiet ? 'error' : options.verbose ? 'debug' : 'info',
    logFormat: options.logFormat,
  };
}

/** The client id and secret as the import's credential options give them (`check` takes the same options). */
export async function resolveCredentials(
  options: Pick<ImportOptions, 'clientId' | 'clientSecret' | 'clientSecretFile'>,
  collected: CollectedOptions,
  env: NodeJS.ProcessEnv,
): Promise<ClientCredentials> {
  if (options.clientId === undefined) throw new UsageError('missing --client-id (or AREA_METRICS_CLIENT_ID)');
  // The secret's own precedence (a flag of either kind beats both env vars) needs to know which were flags.
  const byFlag = (key: 'clientSecret' | 'clientSecretFile'): string | undefined =>
    givenBy(IMPORT_OPTIONS[key], collected, {}) === 'flag' ? options[key] : undefined;
  const { secret } = await resolveClientSecret({ clientSecret: byFlag('clientSecret'), clientSecretFile: byFlag('clientSecretFile') }, env);
  return { clientId: options.clientId, clientSecret: secret };
}
