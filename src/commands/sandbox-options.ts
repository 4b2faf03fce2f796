import { UsageError } from '../errors.js';
import { SANDBOX_LIMITS, type Limit } from '../sandbox/limits.js';
import { DEFAULT_SANDBOX, METRIC_NAMES, RATE_LIMIT_HEADERS, type SandboxFaults, type SandboxPublishing } from '../sandbox/types.js';
import { integer, listOption, oneOf, switchOption, text, valueOption, type OptionValues, type Parser } from './options.js';

/** The CLI's default port: stable for people following the README; `--port 0` picks a free one. */
export const SANDBOX_CLI_DEFAULT_PORT = 8080;

type FailRule = NonNullable<SandboxFaults['failNth']>;
type HiddenRule = NonNullable<SandboxPublishing['hidden']>[number];
type CorrectedRule = NonNullable<SandboxPublishing['corrected']>[number];
type DistortedRule = NonNullable<SandboxPublishing['distorted']>[number];

/** A whole number inside one of the sandbox's limits. */
function within(limit: Limit): Parser<number> {
  return integer(limit.min, limit.max);
}

/** `A:B[:TIMES]` with integer parts, e.g. `3:503` or `3:503:2`. */
function colonParts(source: string, value: string, shape: string, required: number): number[] {
  const parts = value.split(':');
  if (parts.length < required || parts.length > required + 1 || parts.some((part) => !/^\d+$/.test(part))) {
    throw new UsageError(`${source} expects ${shape} (got "${value}")`);
  }
  return parts.map(Number);
}

const failRule: Parser<FailRule> = (value, source) => {
  const [n, status, times] = colonParts(source, value, 'N:STATUS[:TIMES], e.g. 2:503', 2);
  return { n: n!, status: status!, ...(times === undefined ? {} : { times }) };
};

const rateLimitRule: Parser<NonNullable<SandboxFaults['rateLimitNth']>> = (value, source) => {
  const [n, seconds, times] = colonParts(source, value, 'N:SECONDS[:TIMES], e.g. 1:2', 2);
  return { n: n!, retryAfterSeconds: seconds!, ...(times === undefined ? {} : { times }) };
};

/** `N/s`: at most N metric requests in any second. */
const perSecondRule: Parser<number> = (value, source) => {
  const match = /^(\d+)\/s$/.exec(value.trim());
  if (!match) throw new UsageError(`${source} expects N/s, e.g. 10/s (got "${value}")`);
  return within(SANDBOX_LIMITS.ratePerSecond)(match[1]!, source);
};

const truncateRule: Parser<NonNullable<SandboxFaults['truncateNth']>> = (value, source) => {
  const [n, times] = colonParts(source, value, 'N[:TIMES], e.g. 2', 1);
  return { n: n!, ...(times === undefined ? {} : { times }) };
};

/** `DAY[:S001,S002]`: a UTC day's window, or only some stores of it. */
const hideRule: Parser<HiddenRule> = (value, source) => {
  const match = /^(\d{4}-\d{2}-\d{2})(?::(.+))?$/.exec(value);
  if (!match) throw new UsageError(`${source} expects DAY[:STORE,STORE...], e.g. 2026-11-20 or 2026-11-20:S001,S003 (got "${value}")`);
  return { day: match[1]!, ...(match[2] === undefined ? {} : { stores: match[2].split(',') }) };
};

/** `DAY[:REVISION]`: the day's values as the vendor corrected them (revision 1 unless given). */
const correctRule: Parser<CorrectedRule> = (value, source) => {
  const match = /^(\d{4}-\d{2}-\d{2})(?::(\d+))?$/.exec(value);
  if (!match) throw new UsageError(`${source} expects DAY[:REVISION], e.g. 2026-11-18 or 2026-11-18:2 (got "${value}")`);
  return { day: match[1]!, revision: match[2] === undefined ? 1 : within(SANDBOX_LIMITS.revision)(match[2], `${source} revision`) };
};

/**
 * `[METRIC@]DAY:FACTOR[:S001,S002]`: the day's values (of one metric) scaled by FACTOR (0 or `dark`: all zero, a store
 * whose sensors failed), for all stores or these.
 */
const distortRule: Parser<DistortedRule> = (value, source) => {
  const match = /^(?:([a-z-]+)@)?(\d{4}-\d{2}-\d{2}):(\d+(?:\.\d+)?|dark)(?::(.+))?$/.exec(value);
  const metric = METRIC_NAMES.find((name) => name === match?.[1]);
  const { min, max } = SANDBOX_LIMITS.distortFactor;
  const factor = match?.[3] === 'dark' ? 0 : Number(match?.[3]);
  if (!match || (match[1] !== undefined && metric === undefined) || factor > max) {
    throw new UsageError(
      `${source} expects [METRIC@]DAY:FACTOR[:STORE,STORE...] with FACTOR from ${min} to ${max} or dark (0), e.g. 2026-11-20:0.5, 2026-11-20:dark:S003 or unique-users@2026-11-20:0.1:S001 (got "${value}")`,
    );
  }
  return {
    day: match[2]!,
    factor,
    ...(metric === undefined ? {} : { metrics: [metric] }),
    ...(match[4] === undefined ? {} : { stores: match[4].split(',') }),
  };
};

/** Every option of the command: one row each drives commander, the help and the parsing. No env vars are read. */
export const SANDBOX_OPTIONS = {
  host: valueOption({ flags: '--host <host>', parse: text, default: DEFAULT_SANDBOX.host, description: 'interface to listen on' }),
  port: valueOption({
    flags: '--port <port>',
    parse: within(SANDBOX_LIMITS.port),
    default: SANDBOX_CLI_DEFAULT_PORT,
    description: 'port to listen on (0 = any free port, printed on start)',
  }),
  stores: valueOption({
    flags: '--stores <n>',
    parse: within(SANDBOX_LIMITS.stores),
    default: DEFAULT_SANDBOX.stores,
    description: 'number of stores (S001, S002, ...; 14 or more span every offset from -11:00 to +13:00)',
  }),
  zones: valueOption({
    flags: '--zones <n>',
    parse: within(SANDBOX_LIMITS.zones),
    default: DEFAULT_SANDBOX.zones,
    description: 'most zones per store (each store has between half of it and it)',
  }),
  days: valueOption({
    flags: '--days <n>',
    parse: within(SANDBOX_LIMITS.days),
    default: DEFAULT_SANDBOX.days,
    description: 'UTC days with data, ending yesterday (UTC)',
  }),
  seed: valueOption({
    flags: '--seed <n>',
    parse: within(SANDBOX_LIMITS.seed),
    default: DEFAULT_SANDBOX.seed,
    description: 'seed of the synthetic data (same seed, same data)',
  }),
  clientId: valueOption({
    flags: '--client-id <id>',
    parse: text,
    default: DEFAULT_SANDBOX.clientId,
    description: 'accepted client id (Basic auth user and OAuth client)',
  }),
  clientSecret: valueOption({
    flags: '--client-secret <secret>',
    parse: text,
    default: DEFAULT_SANDBOX.clientSecret,
    description: 'accepted client secret',
  }),
  tokenTtl: valueOption({
    flags: '--token-ttl <seconds>',
    parse: within(SANDBOX_LIMITS.tokenTtlSeconds),
    default: DEFAULT_SANDBOX.tokenTtlSeconds,
    description: 'expires_in and JWT lifetime of issued tokens',
  }),
  serveInProgress: switchOption({
    flags: '--serve-in-progress',
    description:
      "serve a store's local day before it has ended, with values that change every hour until it does (default: only days that have ended)",
  }),
  latencyMs: valueOption({
    flags: '--latency-ms <ms>',
    parse: within(SANDBOX_LIMITS.latencyMs),
    description: 'fault: delay every metric request',
  }),
  failNth: valueOption({
    flags: '--fail-nth <N:STATUS[:TIMES]>',
    parse: failRule,
    description: 'fault: the Nth metric request (and TIMES-1 more) answers STATUS',
  }),
  rateLimitNth: valueOption({
    flags: '--rate-limit-nth <N:SECONDS[:TIMES]>',
    parse: rateLimitRule,
    description: 'fault: the Nth metric request answers 429 with Retry-After',
  }),
  truncateNth: valueOption({
    flags: '--truncate-nth <N[:TIMES]>',
    parse: truncateRule,
    description: 'fault: the Nth metric request answers 200 with a truncated JSON body',
  }),
  foreignNextOrigin: valueOption({
    flags: '--foreign-next-origin <origin>',
    parse: text,
    description: 'fault: next/previous links point at this origin (a misconfigured proxy)',
  }),
  repeatResult: switchOption({
    flags: '--repeat-result',
    description: 'fault: each page after the first repeats a result of the previous page and omits one',
  }),
  tokenLatencyMs: valueOption({
    flags: '--token-latency-ms <ms>',
    parse: within(SANDBOX_LIMITS.latencyMs),
    description: 'fault: delay every token request',
  }),
  tokenFailNth: valueOption({
    flags: '--token-fail-nth <N:STATUS[:TIMES]>',
    parse: failRule,
    description: 'fault: the Nth token request answers STATUS',
  }),
  rateLimit: valueOption({
    flags: '--rate-limit <N/s>',
    parse: perSecondRule,
    description:
      "a real rate limit: at most N metric requests in any second (a sliding window, as Django REST Framework's throttles count), 429 with Retry-After in whole seconds beyond it",
  }),
  rateLimitHeaders: valueOption({
    flags: '--rate-limit-headers <kind>',
    parse: oneOf(RATE_LIMIT_HEADERS),
    choices: RATE_LIMIT_HEADERS,
    description:
      'how --rate-limit is announced on each answer: none (default), draft (RateLimit-Policy and RateLimit) or x (X-RateLimit-Limit, -Remaining, -Reset)',
  }),
  hideDay: listOption({
    flags: '--hide-day <DAY[:STORES]>',
    parse: hideRule,
    description: "late vendor: the UTC day's window (or these comma-separated stores of it) is not published yet; repeatable",
  }),
  correctDay: listOption({
    flags: '--correct-day <DAY[:REVISION]>',
    parse: correctRule,
    description: "late vendor: the UTC day's values as corrected after publishing (revision 1 unless given); repeatable",
  }),
  distortDay: listOption({
    flags: '--distort-day <[METRIC@]DAY:FACTOR[:STORES]>',
    parse: distortRule,
    description:
      "wrong numbers: the UTC day's values (of one metric, of these stores) scaled by FACTOR, 0 or dark for all zero (a store gone dark: DAY:dark:S003); repeatable",
  }),
  publishAfter: valueOption({
    flags: '--publish-after <seconds>',
    parse: within(SANDBOX_LIMITS.publishAfterSeconds),
    description: 'late vendor: publish the --hide-day windows this many seconds after start',
  }),
  verbose: switchOption({ flags: '-v, --verbose', description: 'log every request on stderr' }),
};

export type SandboxOptions = OptionValues<typeof SANDBOX_OPTIONS>;

export const SANDBOX_HELP = `
The first stdout line is "sandbox listening on <base URL>"; scripts can parse it.
Metrics: GET <base>/api/bi/area-metrics/{unique-users,avg-screen-time,traffic}/ (Basic auth).
Token:   POST <base>/oauth2/token (client credentials).  Admin (loopback only): POST <base>/_sandbox/faults
         with a JSON body of fault switches, GET <base>/_sandbox/faults, GET <base>/_sandbox/requests,
         POST <base>/_sandbox/publishing with {"hidden": [...], "corrected": [...]}, GET <base>/_sandbox/publishing.

Examples:
  area-metrics sandbox                                  # port 8080, demo-client / demo-secret
  area-metrics sandbox --port 0 --stores 200 --zones 20 --days 7 --seed 42
  area-metrics sandbox --port 0 --fail-nth 2:503 --rate-limit-nth 4:1
  area-metrics sandbox --port 0 --truncate-nth 1 --repeat-result
  area-metrics sandbox --port 0 --rate-limit 10/s --rate-limit-headers draft
  area-metrics sandbox --port 0 --hide-day 2026-11-20:S001,S003 --publish-after 60 --correct-day 2026-11-18
  curl -X POST localhost:8080/_sandbox/faults -d '{"latencyMs": 200}'
  curl -X POST localhost:8080/_sandbox/publishing -d '{"hidden": [{"day": "2026-11-20", "stores": ["S001"]}]}'
  curl -u demo-client:demo-secret 'http://127.0.0.1:8080/api/bi/area-metrics/traffic/?datetime_gte=2026-11-20T00:00:00Z&datetime_lte=2026-11-20T23:59:59Z'`;
