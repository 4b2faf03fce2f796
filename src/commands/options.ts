import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';

/**
 * One table per command declares its options: flag, env var, default, parser and help. Commander and `--help` are
 * driven from it, and the command receives one typed object. The rules are the same for every command:
 * a flag beats its env var, an empty env var counts as unset, and a value from either goes through the same parser,
 * so a bad env var is the same one-line usage error as a bad flag (naming the variable instead of the flag).
 *
 * This module stays light (commander only): `--help` of every command loads it, and nothing else of the command.
 */

/** Turns the text of a flag or env var into a value; throws UsageError naming `source` (the flag or variable). */
export type Parser<T> = (text: string, source: string) => T;

interface CommonSpec {
  /** Commander's flags, e.g. `-o, --output <dir>` or `--dry-run`. */
  readonly flags: string;
  readonly description: string;
  readonly env?: string;
  /** The default as help shows it, where it is not one fixed value (e.g. "csv for files, ndjson for stdout"). */
  readonly defaultText?: string;
  readonly hidden?: boolean;
}

export interface ValueOptionSpec<T, D extends T | undefined> extends CommonSpec {
  readonly kind: 'value';
  readonly parse: Parser<T>;
  readonly default: D;
  /** Shown in help and checked by commander for flags (env values are checked by `parse`). */
  readonly choices?: readonly string[];
}

export interface ListOptionSpec<T> extends CommonSpec {
  readonly kind: 'list';
  readonly parse: Parser<T>;
}

export interface SwitchOptionSpec extends CommonSpec {
  readonly kind: 'switch';
}

export type OptionSpec = ValueOptionSpec<unknown, unknown> | ListOptionSpec<unknown> | SwitchOptionSpec;
export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** What a table's options resolve to: a value (or undefined when it has no default), a list, or a boolean. */
export type OptionValues<Table extends OptionTable> = {
  readonly [Key in keyof Table]: Table[Key] extends ValueOptionSpec<unknown, infer D>
    ? D
    : Table[Key] extends ListOptionSpec<infer T>
      ? readonly T[]
      : boolean;
};

type ValueInput<T> = CommonSpec & { readonly parse: Parser<T>; readonly choices?: readonly string[] };

/** An option that takes a value; with `default` its value is never undefined. */
export function valueOption<T>(spec: ValueInput<T> & { readonly default: NoInfer<T> }): ValueOptionSpec<T, T>;
export function valueOption<T>(spec: ValueInput<T>): ValueOptionSpec<T, T | undefined>;
export function valueOption<T>(spec: ValueInput<T> & { readonly default?: T }): ValueOptionSpec<T, T | undefined> {
  return { kind: 'value', ...spec, default: spec.default };
}

/** A repeatable option (`--store A --store B`); its env var, if any, is not split. */
export function listOption<T>(spec: CommonSpec & { readonly parse: Parser<T> }): ListOptionSpec<T> {
  return { kind: 'list', ...spec };
}

/** A flag without a value; its env var, if any, takes `1`/`true` or `0`/`false`. */
export function switchOption(spec: CommonSpec): SwitchOptionSpec {
  return { kind: 'switch', ...spec };
}

// ---- parsers: one of each kind, for every command ----

/** Any text but blank: an empty `--state ''` would quietly mean something else. */
export const text: Parser<string> = (value, source) => {
  if (value.trim() === '') throw new UsageError(`${source} needs a value`);
  return value;
};

/** A whole number in min..max, written in plain digits. */
export function integer(min: number, max: number, what = 'a whole number'): Parser<number> {
  return (value, source) => {
    const trimmed = value.trim();
    const parsed = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new UsageError(`${source} ${JSON.stringify(value)} must be ${what} from ${min} to ${max}`);
    }
    return parsed;
  };
}

/** Seconds as a decimal (`30`, `2.5`) in 0.001..maxSeconds, returned as whole milliseconds: timers take integers. */
export function seconds(maxSeconds: number): Parser<number> {
  return (value, source) => {
    const trimmed = value.trim();
    const ms = /^\d+(\.\d+)?$/.test(trimmed) ? Math.round(Number(trimmed) * 1000) : Number.NaN;
    if (!(ms >= 1 && ms <= maxSeconds * 1000)) {
      throw new UsageError(`${source} ${JSON.stringify(value)} must be a number of seconds from 0.001 to ${maxSeconds}`);
    }
    return ms;
  };
}

/** One of a fixed set of words. */
export function oneOf<const Choice extends string>(choices: readonly Choice[]): Parser<Choice> {
  return (value, source) => {
    if (!(choices as readonly string[]).includes(value)) {
      throw new UsageError(`${source} ${JSON.stringify(value)} must be one of ${choices.join(', ')}`);
    }
    return value as Choice;
  };
}

const SWITCH_WORDS: Readonly<Record<string, boolean>> = { '1': true, true: true, '0': false, false: false };

function switchFromEnv(value: string, source: string): boolean {
  const parsed = SWITCH_WORDS[value.trim().toLowerCase()];
  if (parsed === undefined) throw new UsageError(`${source} ${JSON.stringify(value)} must be 1, true, 0 or false`);
  return parsed;
}

// ---- commander ----

function helpText(spec: OptionSpec): string {
  const fixed = spec.kind === 'value' ? spec.default : undefined;
  const fixedDefault = fixed === undefined ? undefined : typeof fixed === 'string' ? fixed : JSON.stringify(fixed);
  const shownDefault = spec.defaultText ?? fixedDefault;
  const suffix = [spec.env ? `env: ${spec.env}` : '', shownDefault === undefined ? '' : `default: ${shownDefault}`]
    .filter(Boolean)
    .join(', ');
  return suffix ? `${spec.description} (${suffix})` : spec.description;
}

function commanderOption(spec: OptionSpec): Option {
  const option = new Option(spec.flags, helpText(spec));
  if (spec.kind === 'value' && spec.choices) option.choices(spec.choices);
  if (spec.kind === 'list') option.argParser((value: string, previous: string[] = []) => [...previous, value]);
  if (spec.hidden) option.hideHelp();
  return option;
}

/** Declares a table's options on a command. Commander only collects the text; `readOptions` parses it. */
export function addOptions(command: Command, table: OptionTable): Command {
  for (const spec of Object.values(table)) command.addOption(commanderOption(spec));
  return command;
}

/** The long flag, as messages name it. */
function longFlag(spec: OptionSpec): string {
  return /--[a-z0-9-]+/i.exec(spec.flags)?.[0] ?? spec.flags;
}

/** An environment variable's value; an empty one counts as unset, so `FOO=` never means "". */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** What commander collected, by its attribute names (`--page-size` is `pageSize`). */
export type CollectedOptions = Readonly<Record<string, unknown>>;

/** Resolves every option of a table: flag, else env var, else default; each through the option's parser. */
export function readOptions<Table extends OptionTable>(
  table: Table,
  collected: CollectedOptions,
  env: NodeJS.ProcessEnv,
): OptionValues<Table> {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(table)) {
    const raw = collected[new Option(spec.flags).attributeName()];
    const flag = longFlag(spec);
    const fromEnv = spec.env === undefined ? undefined : envValue(env, spec.env);
    if (spec.kind === 'switch') {
      values[key] = raw === true || (raw === undefined && fromEnv !== undefined && switchFromEnv(fromEnv, spec.env as string));
    } else if (spec.kind === 'list') {
      const texts = Array.isArray(raw) ? (raw as string[]) : fromEnv === undefined ? [] : [fromEnv];
      const source = Array.isArray(raw) ? flag : (spec.env as string);
      values[key] = texts.map((value) => spec.parse(value, source));
    } else if (typeof raw === 'string') {
      values[key] = spec.parse(raw, flag);
    } else if (fromEnv !== undefined) {
      values[key] = spec.parse(fromEnv, spec.env as string);
    } else {
      values[key] = spec.default;
    }
  }
  return values as OptionValues<Table>;
}

/** Where an option's value came from: its flag, its env var, or neither (a rule like "--lookback needs --catch-up"). */
export type OptionSource = 'flag' | 'env' | undefined;

export function givenBy(spec: OptionSpec, collected: CollectedOptions, env: NodeJS.ProcessEnv): OptionSource {
  if (collected[new Option(spec.flags).attributeName()] !== undefined) return 'flag';
  return spec.env !== undefined && envValue(env, spec.env) !== undefined ? 'env' : undefined;
}

/** A table's options as a command receives them: the values, and where each came from. */
export interface ParsedOptions<Table extends OptionTable> {
  readonly values: OptionValues<Table>;
  readonly given: (key: keyof Table & string) => OptionSource;
}

export function parseOptions<Table extends OptionTable>(
  table: Table,
  collected: CollectedOptions,
  env: NodeJS.ProcessEnv,
): ParsedOptions<Table> {
  const values = readOptions(table, collected, env);
  return { values, given: (key) => givenBy(table[key] as OptionSpec, collected, env) };
}
