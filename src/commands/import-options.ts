import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import type { ClientCredentials } from '../fetch/basic-auth.js';
import { parseBaseUrl } from '../fetch/urls.js';
import type { LogFormat, LogLevel } from '../log/logger.js';
import type { OutputFormat, OutputShape } from '../output/format.js';
import { parseDay, type WindowRequest } from '../window/days.js';
import { envValue, resolveClientSecret } from './settings.js';

/**
 * One table drives commander, `--help` and the environment fallbacks of the four import commands.
 * `key` is commander's camel-cased attribute name.
 */
export interface ImportOptionSpec {
  readonly flags: string;
  readonly key: string;
  readonly description: string;
  readonly env?: string;
  readonly defaultText?: string;
  readonly repeatable?: boolean;
  readonly choices?: readonly string[];
}

export const IMPORT_OPTIONS: readonly ImportOptionSpec[] = [
  { flags: '--base-url <url>', key: 'baseUrl', env: 'AREA_METRICS_BASE_URL', description: 'API root; requests go to {base}/api/bi/area-metrics/<metric>/ (required)' },
  { flags: '--client-id <id>', key: 'clientId', env: 'AREA_METRICS_CLIENT_ID', description: 'Basic-auth user (required)' },
  { flags: '--client-secret <secret>', key: 'clientSecret', env: 'AREA_METRICS_CLIENT_SECRET', description: 'Basic-auth password (or --client-secret-file)' },
  { flags: '--client-secret-file <path>', key: 'clientSecretFile', env: 'AREA_METRICS_CLIENT_SECRET_FILE', description: 'read the secret from a file (trailing newline trimmed)' },
  { flags: '--date <YYYY-MM-DD>', key: 'date', description: 'one UTC day (default: yesterday, UTC)' },
  { flags: '--from <YYYY-MM-DD>', key: 'from', description: 'first UTC day of a range (backfill)' },
  { flags: '--to <YYYY-MM-DD>', key: 'to', description: 'last UTC day of the range, inclusive', defaultText: '--from' },
  { flags: '--catch-up', key: 'catchUp', description: 'for each metric, every day after its own last complete day in the state, through yesterday' },
  { flags: '--max-days <n>', key: 'maxDays', description: 'at most this many missing days per metric for --catch-up; a cut says so', defaultText: '31' },
  { flags: '--lookback <n>', key: 'lookback', description: 'with --catch-up: also re-import the n complete days before, for late corrections', defaultText: '0' },
  { flags: '--settle-days <n>', key: 'settleDays', description: 'a day this many days old is final even if some stores never reported', defaultText: '3' },
  { flags: '--give-up-days <n>', key: 'giveUpDays', description: 'a day still unpublished this many days after its window ended is given up (one warning; status lists it)', defaultText: '14' },
  { flags: '--store <code>', key: 'store', repeatable: true, description: 'only this store_code; repeatable (one unit per store)' },
  { flags: '-o, --output <dir|->', key: 'output', env: 'AREA_METRICS_OUTPUT', description: 'output folder, or - for stdout', defaultText: './area-metrics-data' },
  { flags: '-f, --format <format>', key: 'format', choices: ['csv', 'ndjson'], description: 'file format', defaultText: 'csv for files, ndjson for stdout' },
  { flags: '--shape <shape>', key: 'shape', choices: ['rows', 'results'], description: 'rows: one record per store, day and zone; results: one NDJSON line per API result', defaultText: 'rows' },
  { flags: '--page-size <n>', key: 'pageSize', description: 'results per page, 1..10000', defaultText: '1000' },
  { flags: '--concurrency <n>', key: 'concurrency', description: 'units (metric x day x store) fetched at once', defaultText: '4' },
  { flags: '--retries <n>', key: 'retries', description: 'retries per request on network errors, timeouts, 429 and 5xx', defaultText: '5' },
  { flags: '--timeout <seconds>', key: 'timeout', description: 'per-request timeout', defaultText: '60' },
  { flags: '--on-invalid <mode>', key: 'onInvalid', choices: ['fail', 'skip'], description: 'a record that breaks the data contract fails the unit, or is set aside in _rejected/', defaultText: 'fail' },
  { flags: '--state <file>', key: 'state', description: 'state file for --catch-up', defaultText: '<output>/.area-metrics-state.json' },
  { flags: '--dry-run', key: 'dryRun', description: 'print the requests it would make (no credentials needed) and exit' },
  { flags: '-q, --quiet', key: 'quiet', description: 'print errors only' },
  { flags: '-v, --verbose', key: 'verbose', description: 'also log every page fetched and every retry' },
  { flags: '--log-format <format>', key: 'logFormat', choices: ['text', 'json'], description: 'stderr as text lines or one JSON object per line', defaultText: 'text' },
];

export function addImportOptions(command: Command): Command {
  for (const spec of IMPORT_OPTIONS) {
    const suffix = [spec.env ? `env: ${spec.env}` : '', spec.defaultText ? `default: ${spec.defaultText}` : '']
      .filter(Boolean)
      .join(', ');
    const option = new Option(spec.flags, suffix ? `${spec.description} (${suffix})` : spec.description);
    if (spec.choices) option.choices(spec.choices);
    if (spec.repeatable) option.argParser((value: string, previous: string[] = []) => [...previous, value]);
    command.addOption(option);
  }
  return command;
}

export type RawImportOptions = Readonly<Record<string, string | boolean | string[] | undefined>>;

export type OutputTarget = { readonly kind: 'files'; readonly dir: string } | { readonly kind: 'stdout' };

export interface ImportConfig {
  readonly baseUrl: URL;
  /** Absent only for --dry-run, which needs none. */
  readonly credentials?: ClientCredentials;
  readonly window: WindowRequest | { readonly kind: 'catch-up'; readonly maxDays: number; readonly lookback: number };
  readonly settleDays: number;
  readonly giveUpDays: number;
  readonly storeCodes: readonly string[];
  readonly output: OutputTarget;
  readonly format: OutputFormat;
  readonly shape: OutputShape;
  readonly pageSize: number;
  readonly concurrency: number;
  readonly retries: number;
  readonly timeoutMs: number;
  readonly onInvalid: 'fail' | 'skip';
  readonly statePath?: string;
  readonly dryRun: boolean;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

function text(raw: RawImportOptions, key: string, env: NodeJS.ProcessEnv): string | undefined {
  const flag = raw[key];
  if (typeof flag === 'string') return flag;
  const spec = IMPORT_OPTIONS.find((option) => option.key === key);
  return spec?.env ? envValue(env, spec.env) : undefined;
}

function integer(value: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`${flag} ${JSON.stringify(value)} must be a whole number from ${min} to ${max}`);
  }
  return parsed;
}

/** Seconds as a decimal (`30`, `2.5`), returned as whole milliseconds: timers take integers. */
function milliseconds(value: string | undefined, flag: string, fallbackSeconds: number): number {
  if (value === undefined) return fallbackSeconds * 1000;
  const ms = /^\d+(\.\d+)?$/.test(value.trim()) ? Math.round(Number(value.trim()) * 1000) : Number.NaN;
  if (!(ms >= 1 && ms <= 3_600_000)) {
    throw new UsageError(`${flag} ${JSON.stringify(value)} must be a number of seconds from 0.001 to 3600`);
  }
  return ms;
}

/** Everything a run needs, checked before any request: a bad flag is exit 2 with one line naming the fix. */
export async function resolveImportConfig(
  raw: RawImportOptions,
  env: NodeJS.ProcessEnv,
  metricCount: number,
): Promise<ImportConfig> {
  const dryRun = raw.dryRun === true;
  const date = text(raw, 'date', env);
  const from = text(raw, 'from', env);
  const to = text(raw, 'to', env);
  const catchUp = raw.catchUp === true;
  if (date !== undefined && (from !== undefined || to !== undefined)) {
    throw new UsageError('--date cannot be combined with --from/--to; use one or the other');
  }
  if (to !== undefined && from === undefined) throw new UsageError('--to needs --from');
  if (catchUp && (date !== undefined || from !== undefined)) {
    throw new UsageError('--catch-up cannot be combined with --date or --from/--to');
  }
  const maxDays = integer(text(raw, 'maxDays', env), '--max-days', 31, 1, 3660);
  const lookbackText = text(raw, 'lookback', env);
  if (lookbackText !== undefined && !catchUp) throw new UsageError('--lookback needs --catch-up (a backfill names its days with --from/--to)');
  const lookback = integer(lookbackText, '--lookback', 0, 0, 366);
  const settleDays = integer(text(raw, 'settleDays', env), '--settle-days', 3, 1, 3660);
  const giveUpDays = integer(text(raw, 'giveUpDays', env), '--give-up-days', 14, 1, 3660);
  const window: ImportConfig['window'] = catchUp
    ? { kind: 'catch-up', maxDays, lookback }
    : date !== undefined
      ? { kind: 'date', date: parseDay(date, '--date') }
      : from !== undefined
        ? { kind: 'range', from: parseDay(from, '--from'), ...(to === undefined ? {} : { to: parseDay(to, '--to') }) }
        : { kind: 'default' };
  if (window.kind === 'range' && window.to !== undefined && window.from > window.to) {
    throw new UsageError(`--from ${window.from} is after --to ${window.to}; swap them`);
  }

  const baseUrlText = text(raw, 'baseUrl', env);
  if (baseUrlText === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(baseUrlText);

  const outputText = text(raw, 'output', env) ?? './area-metrics-data';
  // An empty path would quietly mean the current folder.
  if (outputText.trim() === '') throw new UsageError('-o/--output needs a folder, or - for stdout');
  const output: OutputTarget = outputText === '-' ? { kind: 'stdout' } : { kind: 'files', dir: outputText };
  const shape = (text(raw, 'shape', env) ?? 'rows') as OutputShape;
  const format = (text(raw, 'format', env) ?? (output.kind === 'stdout' || shape === 'results' ? 'ndjson' : 'csv')) as OutputFormat;
  if (shape === 'results' && format === 'csv') throw new UsageError('--shape results is NDJSON only; use --format ndjson');
  if (output.kind === 'stdout' && format === 'csv' && metricCount > 1) {
    throw new UsageError('CSV on stdout needs a single metric (their columns differ); use --format ndjson or -o <dir>');
  }
  const statePath = text(raw, 'state', env);
  if (statePath !== undefined && statePath.trim() === '') throw new UsageError('--state needs a file path');
  if (catchUp && output.kind === 'stdout' && statePath === undefined) {
    throw new UsageError('--catch-up with -o - needs --state <file> to remember the last complete day');
  }
  const storeCodes = [...new Set((raw.store as string[] | undefined) ?? [])];
  for (const code of storeCodes) {
    if (code.trim() === '') throw new UsageError('--store needs a non-empty store code');
  }
  if (raw.quiet === true && raw.verbose === true) throw new UsageError('--quiet and --verbose contradict each other; pick one');
  const pageSize = integer(text(raw, 'pageSize', env), '--page-size', 1000, 1, 10_000);
  const concurrency = integer(text(raw, 'concurrency', env), '--concurrency', 4, 1, 64);
  const retries = integer(text(raw, 'retries', env), '--retries', 5, 0, 20);
  const timeoutMs = milliseconds(text(raw, 'timeout', env), '--timeout', 60);
  // Credentials last: every other mistake is reported first, and --dry-run needs none.
  const credentials = dryRun ? undefined : await resolveCredentials(raw, env);

  return {
    baseUrl,
    ...(credentials ? { credentials } : {}),
    window,
    settleDays,
    giveUpDays,
    storeCodes,
    output,
    format,
    shape,
    pageSize,
    concurrency,
    retries,
    timeoutMs,
    onInvalid: (text(raw, 'onInvalid', env) ?? 'fail') as 'fail' | 'skip',
    ...(statePath === undefined ? {} : { statePath }),
    dryRun,
    logLevel: raw.quiet === true ? 'error' : raw.verbose === true ? 'debug' : 'info',
    logFormat: (text(raw, 'logFormat', env) ?? 'text') as LogFormat,
  };
}

async function resolveCredentials(raw: RawImportOptions, env: NodeJS.ProcessEnv): Promise<ClientCredentials> {
  const clientId = text(raw, 'clientId', env);
  if (clientId === undefined) throw new UsageError('missing --client-id (or AREA_METRICS_CLIENT_ID)');
  const { secret } = await resolveClientSecret(
    { clientSecret: typeof raw.clientSecret === 'string' ? raw.clientSecret : undefined, clientSecretFile: typeof raw.clientSecretFile === 'string' ? raw.clientSecretFile : undefined },
    env,
  );
  return { clientId, clientSecret: secret };
}
