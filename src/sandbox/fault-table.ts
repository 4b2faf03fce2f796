import { SANDBOX_LIMITS, type Limit } from './limits.js';

/**
 * The sandbox's fault language, once: each fault switch with its value (kinds, bounds, names), its flag of the
 * `sandbox` command and its help. The type `SandboxFaults` is derived from it; the command's flags and `--help`
 * (`commands/sandbox-options.ts`) and the schema every way faults arrive goes through (`faults.ts`: options,
 * `setFaults`, the flags, `POST /_sandbox/faults`) are built from it. (No zod here: the command's `--help` reads it.)
 */

/** How the sandbox announces its rate limit: not at all, with the IETF httpapi draft's fields, or the X- ones. */
export const RATE_LIMIT_HEADERS = ['none', 'draft', 'x'] as const;
export type RateLimitHeaders = (typeof RATE_LIMIT_HEADERS)[number];

/** A whole number from `min` (to `max` when there is one); `label` names it where a flag's text holds it. */
export interface IntegerSpec {
  readonly kind: 'integer';
  readonly min: number;
  readonly max?: number;
  readonly label: string;
  /** Written after the number in a flag's text, e.g. `/s` in `10/s`. */
  readonly suffix?: string;
}

export interface ChoiceSpec<Choice extends string = string> {
  readonly kind: 'choice';
  readonly choices: readonly Choice[];
  readonly label: string;
}

/** An http(s) URL, of which the origin is kept. */
export interface OriginSpec {
  readonly kind: 'origin';
  readonly label: string;
}

export interface SwitchSpec {
  readonly kind: 'switch';
}

export type FieldSpec = (IntegerSpec | ChoiceSpec) & { readonly optional?: true };

/** Named fields, in order. Given as one flag, their numbers are written in order separated by `:`, e.g. `2:503:2`. */
export interface FieldsSpec<Fields extends Readonly<Record<string, FieldSpec>> = Readonly<Record<string, FieldSpec>>> {
  readonly kind: 'fields';
  readonly fields: Fields;
  /** A flag's text, as messages show it. */
  readonly example: string;
}

export type ValueSpec = IntegerSpec | ChoiceSpec | OriginSpec | SwitchSpec | FieldsSpec;

export interface FaultRow {
  readonly value: ValueSpec;
  /** The `sandbox` command's flag (its placeholder is derived from the value). */
  readonly flag: string;
  readonly help: string;
  /**
   * Fields given by flags of their own, `<flag>-<field>` (the other field takes `flag`), with their help. A field's
   * flag without the fault's is a usage error.
   */
  readonly fieldFlags?: Readonly<Record<string, { readonly help: string }>>;
}

function integer(limit: Limit, label: string, suffix?: string): IntegerSpec {
  return { kind: 'integer', min: limit.min, max: limit.max, label, ...(suffix === undefined ? {} : { suffix }) };
}

function optional<Spec extends FieldSpec>(spec: Spec): Spec & { readonly optional: true } {
  return { ...spec, optional: true };
}

/** The Nth request (1-based, counted from when the faults are set) and the next `times`-1. */
const N = { kind: 'integer', min: 1, label: 'N' } as const satisfies IntegerSpec;
const TIMES = optional({ kind: 'integer', min: 1, label: 'TIMES' } as const satisfies IntegerSpec);
// A failure is an error status: a 1xx leaves the client waiting and a 204/304 cannot carry the JSON error body.
const STATUS = { kind: 'integer', min: 400, max: 599, label: 'STATUS' } as const satisfies IntegerSpec;

function nth<const Extra extends Readonly<Record<string, FieldSpec>>>(
  extra: Extra,
  example: string,
): FieldsSpec<{ readonly n: typeof N } & Extra & { readonly times: typeof TIMES }> {
  return { kind: 'fields', fields: { n: N, ...extra, times: TIMES }, example };
}

export const SANDBOX_FAULTS = {
  latencyMs: {
    value: integer(SANDBOX_LIMITS.latencyMs, 'ms'),
    flag: '--latency-ms',
    help: 'fault: delay every metric request',
  },
  failNth: {
    value: nth({ status: STATUS }, '2:503'),
    flag: '--fail-nth',
    help: 'fault: the Nth metric request (and TIMES-1 more) answers STATUS',
  },
  rateLimitNth: {
    value: nth({ retryAfterSeconds: integer(SANDBOX_LIMITS.retryAfterSeconds, 'SECONDS') }, '1:2'),
    flag: '--rate-limit-nth',
    help: 'fault: the Nth metric request answers 429 with Retry-After',
  },
  truncateNth: {
    value: nth({}, '2'),
    flag: '--truncate-nth',
    help: 'fault: the Nth metric request answers 200 with a truncated JSON body',
  },
  foreignNextOrigin: {
    value: { kind: 'origin', label: 'origin' },
    flag: '--foreign-next-origin',
    help: 'fault: next/previous links point at this origin (a misconfigured proxy)',
  },
  repeatResult: {
    value: { kind: 'switch' },
    flag: '--repeat-result',
    help: 'fault: each page after the first repeats a result of the previous page and omits one',
  },
  tokenLatencyMs: {
    value: integer(SANDBOX_LIMITS.latencyMs, 'ms'),
    flag: '--token-latency-ms',
    help: 'fault: delay every token request',
  },
  rateLimit: {
    value: {
      kind: 'fields',
      fields: {
        perSecond: integer(SANDBOX_LIMITS.ratePerSecond, 'N', '/s'),
        headers: optional({ kind: 'choice', choices: RATE_LIMIT_HEADERS, label: 'kind' }),
      },
      example: '10/s',
    },
    flag: '--rate-limit',
    help: "a real rate limit: at most N metric requests in any second (a sliding window, as Django REST Framework's throttles count), 429 with Retry-After in whole seconds beyond it",
    fieldFlags: {
      headers: {
        help: 'how --rate-limit is announced on each answer: none (default), draft (RateLimit-Policy and RateLimit) or x (X-RateLimit-Limit, -Remaining, -Reset)',
      },
    },
  },
  tokenFailNth: {
    value: nth({ status: STATUS }, '2:503'),
    flag: '--token-fail-nth',
    help: 'fault: the Nth token request answers STATUS',
  },
} as const satisfies Readonly<Record<string, FaultRow>>;

export type FaultName = keyof typeof SANDBOX_FAULTS;

export const FAULT_NAMES = Object.keys(SANDBOX_FAULTS) as FaultName[];

type ValueOf<Spec> = Spec extends IntegerSpec
  ? number
  : Spec extends ChoiceSpec<infer Choice>
    ? Choice
    : Spec extends OriginSpec
      ? string
      : Spec extends SwitchSpec
        ? boolean
        : Spec extends FieldsSpec<infer Fields>
          ? FieldsValue<Fields>
          : never;

type FieldsValue<Fields> = {
  -readonly [Key in keyof Fields as Fields[Key] extends { readonly optional: true } ? never : Key]: ValueOf<Fields[Key]>;
} & {
  -readonly [Key in keyof Fields as Fields[Key] extends { readonly optional: true } ? Key : never]?: ValueOf<Fields[Key]>;
};

/** Switches that make the sandbox misbehave on purpose, to test a client's retries and completeness checks. */
export type SandboxFaults = { -readonly [Name in FaultName]?: ValueOf<(typeof SANDBOX_FAULTS)[Name]['value']> };

/** The key, in the command's option table, of a field given by a flag of its own. */
export function fieldOptionKey(fault: string, field: string): string {
  return `${fault}:${field}`;
}

/** The flag of a field given by a flag of its own: `--rate-limit-headers`. */
export function fieldFlag(row: FaultRow, field: string): string {
  return `${row.flag}-${field.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** How a flag's text writes a value: `ms`, `N/s`, `N:STATUS[:TIMES]`, `origin`, `kind`. */
export function placeholder(spec: ValueSpec): string {
  switch (spec.kind) {
    case 'integer':
      return `${spec.label}${spec.suffix ?? ''}`;
    case 'fields':
      return Object.values(spec.fields)
        .map((field, index) => {
          const part = `${index === 0 ? '' : ':'}${placeholder(field)}`;
          return field.optional ? `[${part}]` : part;
        })
        .join('');
    case 'switch':
      return '';
    default:
      return spec.label;
  }
}

/**
 * What a fault's flag gives: the whole value, or (for a row with fields of their own flags) the one field left, by
 * name; and those fields.
 */
export function flagFields(row: FaultRow): {
  readonly main: { readonly field?: string; readonly spec: ValueSpec };
  readonly own: readonly string[];
} {
  const own = Object.keys(row.fieldFlags ?? {});
  if (own.length === 0 || row.value.kind !== 'fields') return { main: { spec: row.value }, own: [] };
  const [field, spec] = Object.entries(row.value.fields).find(([name]) => !own.includes(name)) ?? [];
  if (field === undefined || spec === undefined) throw new Error(`fault flag ${row.flag} gives no field`);
  return { main: { field, spec }, own };
}
