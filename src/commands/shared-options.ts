import { UsageError } from '../errors.js';
import { checkStateUrl, destinationSpec, type DestinationSpec } from '../destination/spec.js';
import { DEFAULT_MAX_WAIT_MS, PACE_FLOOR_RPS } from '../fetch/wait-cap.js';
import { integer, seconds, switchOption, text, valueOption, type Parser } from './options.js';

/**
 * The option rows several commands share, declared and parsed one way: the credentials, the request budget, where
 * the output and its state are. A command's own table spreads the rows it takes.
 */

/** Text that names a path: blank would quietly mean the current folder. */
export function path(what: string): Parser<string> {
  return (value, source) => {
    if (value.trim() === '') throw new UsageError(`${source} needs ${what}`);
    return value;
  };
}

/** The client id and secret (Basic auth for the API, the client-credentials exchange for `token`). */
export const CREDENTIAL_OPTIONS = {
  clientId: valueOption({
    flags: '--client-id <id>',
    env: 'AREA_METRICS_CLIENT_ID',
    parse: text,
    description: 'client id: the Basic-auth user, or the OAuth client',
  }),
  clientSecret: valueOption({
    flags: '--client-secret <secret>',
    env: 'AREA_METRICS_CLIENT_SECRET',
    parse: text,
    description: 'client secret (prefer the env var or --client-secret-file: a flag shows in ps)',
  }),
  clientSecretFile: valueOption({
    flags: '--client-secret-file <path>',
    env: 'AREA_METRICS_CLIENT_SECRET_FILE',
    parse: path('a file path'),
    description: 'read the client secret from a file (trailing newline trimmed)',
  }),
};

/** Requests a second: a decimal (`10`, `0.5`) from the pace floor (0.1) to 10,000. */
const requestsPerSecond: Parser<number> = (value, source) => {
  const rate = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!(rate >= PACE_FLOOR_RPS && rate <= 10_000)) {
    throw new UsageError(`${source} ${JSON.stringify(value)} must be a number of requests a second from ${PACE_FLOOR_RPS} to 10000`);
  }
  return rate;
};

/** The metrics API: where it is, as whom, how fast it may be asked, and how long it may make a run wait. */
export const API_OPTIONS = {
  baseUrl: valueOption({
    flags: '--base-url <url>',
    env: 'AREA_METRICS_BASE_URL',
    parse: text,
    description: 'API root; requests go to {base}/api/bi/area-metrics/<metric>/ (required)',
  }),
  ...CREDENTIAL_OPTIONS,
  maxRps: valueOption({
    flags: '--max-rps <n>',
    env: 'AREA_METRICS_MAX_RPS',
    parse: requestsPerSecond,
    description: "at most n requests a second, for a vendor's documented limit (the run also adapts to the vendor's answers)",
  }),
  maxWait: valueOption({
    flags: '--max-wait <seconds>',
    env: 'AREA_METRICS_MAX_WAIT',
    parse: seconds(3600),
    default: DEFAULT_MAX_WAIT_MS,
    defaultText: String(DEFAULT_MAX_WAIT_MS / 1000),
    description: 'the longest wait the vendor may ask for (Retry-After, a reset, a window); asking for more twice ends the run (exit 4)',
  }),
};

/** A command's per-request timeout and retries (an import waits longer than a check). */
export interface RequestBudget {
  readonly timeoutSeconds: number;
  readonly retries: number;
  readonly maxRetries: number;
}

/** An import's: also what the state's object store gets from the commands that only read or settle the state. */
export const IMPORT_REQUEST_BUDGET: RequestBudget = { timeoutSeconds: 60, retries: 5, maxRetries: 20 };

/** Per-request timeout and retries, with a command's own budget. */
export function requestBudgetOptions(budget: RequestBudget) {
  return {
    timeout: valueOption({
      flags: '--timeout <seconds>',
      parse: seconds(3600),
      default: budget.timeoutSeconds * 1000,
      defaultText: String(budget.timeoutSeconds),
      description: 'per-request timeout',
    }),
    retries: valueOption({
      flags: '--retries <n>',
      parse: integer(0, budget.maxRetries),
      default: budget.retries,
      description: 'retries per request on network errors, timeouts, 429 and 5xx',
    }),
  };
}

/** `-o` read once into the destination it names. */
const destination: Parser<DestinationSpec> = (value, source) => destinationSpec(value, source);

const DEFAULT_OUTPUT = './area-metrics-data';

const S3_FORCE_PATH_STYLE = switchOption({
  flags: '--s3-force-path-style',
  env: 'AREA_METRICS_S3_FORCE_PATH_STYLE',
  description: 'path-style bucket addressing (host/bucket/key), which most S3-compatible stores need',
});

/** Where an import writes: a folder, a bucket and prefix, or stdout; and its state, beside it unless named. */
export const OUTPUT_OPTIONS = {
  output: valueOption({
    flags: '-o, --output <dir|s3://bucket/prefix|postgresql://...|->',
    env: 'AREA_METRICS_OUTPUT',
    parse: destination,
    default: destinationSpec(DEFAULT_OUTPUT, '-o/--output'),
    defaultText: DEFAULT_OUTPUT,
    description: 'output folder, an S3-compatible bucket and prefix, a PostgreSQL database, or - for stdout',
  }),
  s3ForcePathStyle: S3_FORCE_PATH_STYLE,
  state: valueOption({
    flags: '--state <file|s3://bucket/key>',
    parse: checkStateUrl,
    defaultText: '<output>/.area-metrics-state.json',
    description: 'state file (or object) for --catch-up and status',
  }),
};

/** Where `status`, `accept` and `reopen` find the state: an output folder's or bucket prefix's, or one named outright. */
export const STATE_LOCATION_OPTIONS = {
  output: valueOption({
    flags: '-o, --output <dir|s3://bucket/prefix|postgresql://...>',
    env: 'AREA_METRICS_OUTPUT',
    parse: destination,
    default: destinationSpec(DEFAULT_OUTPUT, '-o/--output'),
    defaultText: DEFAULT_OUTPUT,
    description: 'output folder, bucket and prefix, or PostgreSQL database whose state to use',
  }),
  state: { ...OUTPUT_OPTIONS.state, description: 'state file or object to use' },
  s3ForcePathStyle: S3_FORCE_PATH_STYLE,
};
