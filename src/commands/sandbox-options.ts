import { UsageError } from '../errors.js';
import {
  fieldFlag,
  fieldOptionKey,
  flagFields,
  placeholder,
  SANDBOX_FAULTS,
  type FaultName,
  type FaultRow,
  type FieldsSpec,
  type ValueSpec,
} from '../sandbox/fault-table.js';
import { SANDBOX_LIMITS, type Limit } from '../sandbox/limits.js';
import { REQUEST_LOG_CAPACITY } from '../sandbox/request-log.js';
import { DEFAULT_SANDBOX, METRIC_NAMES, type SandboxPublishing } from '../sandbox/types.js';
import { integer, listOption, oneOf, switchOption, text, valueOption, type OptionSpec, type OptionValues, type Parser } from './options.js';

/** The CLI's default port: stable for people following the README; `--port 0` picks a free one. */
export const SANDBOX_CLI_DEFAULT_PORT = 8080;

type HiddenRule = NonNullable<SandboxPublishing['hidden']>[number];
type CorrectedRule = NonNullable<SandboxPublishing['corrected']>[number];
type DistortedRule = NonNullable<SandboxPublishing['distorted']>[number];

/** A whole number inside one of the sandbox's limits. */
function within(limit: Limit): Parser<number> {
  return integer(limit.min, limit.max);
}

/**
 * A flag's text of a value of the fault table as the value the fault's schema checks (its bounds are checked there,
 * when the sandbox starts, with the same messages as a body posted to the admin route): a number, `N/s`, fields
 * written `A:B[:C]`, an origin or a choice.
 */
function flagParser(spec: ValueSpec, example: string): Parser<unknown> {
  switch (spec.kind) {
    case 'integer': {
      const whole = integer(spec.min, spec.max ?? Number.MAX_SAFE_INTEGER);
      if (spec.suffix === undefined) return whole;
      const suffix = spec.suffix;
      return (value, source) => {
        const trimmed = value.trim();
        if (!/^\d+$/.test(trimmed.slice(0, -suffix.length)) || !trimmed.endsWith(suffix)) {
          throw new UsageError(`${source} expects ${placeholder(spec)}, e.g. ${example} (got "${value}")`);
        }
        return whole(trimmed.slice(0, -suffix.length), source);
      };
    }
    case 'fields':
      return colonFields(spec);
    case 'choice':
      return oneOf(spec.choices);
    default:
      return text;
  }
}

/** `A:B[:C]`: the fields' whole numbers in order, the optional ones last, e.g. `3:503` or `3:503:2`. */
function colonFields(spec: FieldsSpec): Parser<Record<string, number>> {
  const names = Object.keys(spec.fields);
  const required = Object.values(spec.fields).filter((field) => !field.optional).length;
  return (value, source) => {
    const parts = value.split(':');
    if (parts.length < required || parts.length > names.length || parts.some((part) => !/^\d+$/.test(part))) {
      throw new UsageError(`${source} expects ${placeholder(spec)}, e.g. ${spec.example} (got "${value}")`);
    }
    return Object.fromEntries(parts.map((part, index): [string, number] => [names[index]!, Number(part)]));
  };
}

/** A field's or a value's flag with its placeholder, as commander declares it. */
function flagWithPlaceholder(flag: string, spec: ValueSpec): string {
  return spec.kind === 'switch' ? flag : `${flag} <${placeholder(spec)}>`;
}

/** The options of one fault: its flag, and the flags of its fields that have their own. */
function faultOptions(name: FaultName, row: FaultRow): [string, OptionSpec][] {
  const { main, own } = flagFields(row);
  const example = row.value.kind === 'fields' ? row.value.example : '';
  const mainOption: OptionSpec =
    main.spec.kind === 'switch'
      ? switchOption({ flags: row.flag, description: row.help })
      : valueOption({ flags: flagWithPlaceholder(row.flag, main.spec), parse: flagParser(main.spec, example), description: row.help });
  const fieldOptions = own.map((field): [string, OptionSpec] => {
    const spec = (row.value as FieldsSpec).fields[field]!;
    const choices = spec.kind === 'choice' ? { choices: spec.choices } : {};
    const flags = flagWithPlaceholder(fieldFlag(row, field), spec);
    const description = row.fieldFlags?.[field]?.help ?? '';
    return [fieldOptionKey(name, field), valueOption({ flags, parse: flagParser(spec, example), description, ...choices })];
  });
  return [[name, mainOption], ...fieldOptions];
}

/** Every fault's options, in the table's order: keyed by the fault's name, and `<name>:<field>` for a field's own flag. */
const FAULT_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.fromEntries(
  (Object.entries(SANDBOX_FAULTS) as [FaultName, FaultRow][]).flatMap(([name, row]) => faultOptions(name, row)),
);

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

/**
 * Every option of the command: one row each drives commander, the help and the parsing; the faults' rows come from
 * the fault table. No env vars are read but the clock's (`AREA_METRICS_NOW`, read as the import commands read it).
 */
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
  ...FAULT_OPTIONS,
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

/** The fault switches a body of `POST /_sandbox/faults` takes, as the table names them: `failNth {n, status, times}`. */
function faultKeys(): string {
  return (Object.entries(SANDBOX_FAULTS) as [FaultName, FaultRow][])
    .map(([name, row]) => (row.value.kind === 'fields' ? `${name} {${Object.keys(row.value.fields).join(', ')}}` : name))
    .join(', ');
}

/** Words joined into lines of at most `width` characters, each after `indent`. */
function wrapped(words: string, indent: string, width = 118): string {
  const lines: string[] = [];
  for (const word of words.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + word.length <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(`${indent}${word}`);
  }
  return lines.join('\n');
}

export const SANDBOX_HELP = `
The first stdout line is "sandbox listening on <base URL>"; scripts can parse it.
Metrics: GET <base>/api/bi/area-metrics/{${METRIC_NAMES.join(',')}}/ (Basic auth).
Token:   POST <base>/oauth2/token (client credentials).
Admin:   from this machine only, addressed to the sandbox (Host 127.0.0.1:<port>, localhost:<port>, [::1]:<port> or
         the --host given) and not from a web page of another origin (Origin):
         POST <base>/_sandbox/faults with a JSON object of fault switches, GET <base>/_sandbox/faults; the switches:
${wrapped(faultKeys(), '           ')}
         POST <base>/_sandbox/publishing with {"hidden": [...], "corrected": [...], "distorted": [...]},
           each rule {"day": "YYYY-MM-DD", "stores": [...]?} (corrected: "revision"; distorted: "factor", "metrics"?),
           GET <base>/_sandbox/publishing;
         GET <base>/_sandbox/requests: the newest ${REQUEST_LOG_CAPACITY} requests, and counts of all.
Clock:   AREA_METRICS_NOW=<ISO 8601 instant> freezes the sandbox's clock (which days exist, which have ended), as
         it does the import commands': give both the same instant to play a night, a later one for the next.

Examples:
  area-metrics sandbox                                  # port 8080, demo-client / demo-secret
  area-metrics sandbox --port 0 --stores 200 --zones 20 --days 7 --seed 42
  area-metrics sandbox --port 0 --fail-nth 2:503 --rate-limit-nth 4:1
  area-metrics sandbox --port 0 --truncate-nth 1 --repeat-result
  area-metrics sandbox --port 0 --rate-limit 10/s --rate-limit-headers draft
  area-metrics sandbox --port 0 --hide-day 2026-11-20:S001,S003 --publish-after 60 --correct-day 2026-11-18
  AREA_METRICS_NOW=2026-11-22T12:00:00Z area-metrics sandbox --port 0   # its clock at noon: data up to 2026-11-21
  curl -X POST localhost:8080/_sandbox/faults -d '{"latencyMs": 200}'
  curl -X POST localhost:8080/_sandbox/publishing -d '{"hidden": [{"day": "2026-11-20", "stores": ["S001"]}]}'
  curl -X POST localhost:8080/_sandbox/publishing -d '{"distorted": [{"day": "2026-11-20", "metrics": ["traffic"], "factor": 0.5}]}'
  curl -u demo-client:demo-secret 'http://127.0.0.1:8080/api/bi/area-metrics/traffic/?datetime_gte=2026-11-20T00:00:00Z&datetime_lte=2026-11-20T23:59:59Z'`;
