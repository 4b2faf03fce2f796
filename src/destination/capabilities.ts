import { UsageError } from '../errors.js';
import type { OutputFormat, OutputShape } from '../output/format.js';
import type { KeptSettings } from '../state/storage/kept-settings.js';

/** Where a destination's state lives: beside its data unless `--state` names another place; only where `--state` names it; in itself. */
export type StateHome = 'beside-data' | 'named-only' | 'inside';

/** What a run may ask of a destination and it cannot take: each refusal is one line (exit 2). */
export type Refusal = 'format' | 'layout' | 'shape' | 'state' | 'csv-of-many-metrics' | 'catch-up-without-state';

/**
 * What a destination holds, declared once as plain data (its row beside `openDestination`): a run's options are
 * checked against it (`checkOutputOptions`), and the run reads it rather than asking which kind of destination it has.
 */
export interface DestinationCapabilities {
  /** Its units are files (or objects): `--layout` lays them out, and the environment's format and layout describe them. */
  readonly files: boolean;
  /** The formats it holds; with one only, `-f` has nothing to choose. */
  readonly formats: readonly OutputFormat[];
  /** The format when neither the run, its shape nor the state names one. */
  readonly defaultFormat: OutputFormat;
  readonly shapes: readonly OutputShape[];
  readonly state: StateHome;
  /** The settings its state keeps from its first run, so the output holds one kind of file (a later run is refused another). */
  readonly keeps: readonly (keyof KeptSettings)[];
  /** Units go out one after another under one CSV header: CSV holds a single metric (their columns differ). */
  readonly sharedHeader: boolean;
  /** It takes each unit as soon as it is fetched (each on its own, in any order), not in plan order one at a time. */
  readonly commitsAhead: boolean;
  /** It admits one run at a time: a second waits for its turn (`claim`) before it reads the state. */
  readonly oneRunAtATime: boolean;
  /** How it says a refusal in its own words; one it does not word is said in general terms. */
  readonly refusals: Partial<Record<Refusal, string>>;
}

/** Where a value of a setting came from: a flag, its environment variable, or neither (its default). */
export type OptionSource = 'flag' | 'env' | undefined;

/** The options of a run that concern its destination, as given. */
export interface OutputOptions {
  readonly format: OutputFormat | undefined;
  readonly formatFrom: OptionSource;
  readonly layoutFrom: OptionSource;
  readonly shape: OutputShape;
  /** `--state`, if given. */
  readonly state: string | undefined;
  readonly catchUp: boolean;
  /** How many metrics the run imports. */
  readonly metricCount: number;
}

/** Each refusal in general terms, for a destination that does not word it. */
const IN_GENERAL: Record<Refusal, string> = {
  format: 'this output does not hold the format asked for; drop -f',
  layout: '--layout names files in a folder or bucket; this output has none',
  shape: 'this output does not hold the shape asked for; drop --shape',
  state: 'this output keeps its state itself; drop --state',
  'csv-of-many-metrics': 'CSV here needs a single metric (their columns differ); use --format ndjson',
  'catch-up-without-state': '--catch-up needs --state <file> to remember the last complete day',
};

/** A check of a run's options against a row: the refusal said when it applies, given the format the run would have. */
interface Check {
  readonly refusal: Refusal;
  readonly applies: (held: DestinationCapabilities, run: OutputOptions, format: OutputFormat | undefined) => boolean;
}

/** What is refused before the format is known: -f where there is nothing to choose, a shape or a `--state` it cannot take. */
const BEFORE_FORMAT: readonly Check[] = [
  { refusal: 'format', applies: (held, run) => run.formatFrom === 'flag' && held.formats.length === 1 },
  { refusal: 'shape', applies: (held, run) => !held.shapes.includes(run.shape) },
  { refusal: 'state', applies: (held, run) => run.state !== undefined && held.state === 'inside' },
];

/** What is refused once the format is known (after `--shape results`, which is NDJSON only, whatever the destination). */
const AFTER_FORMAT: readonly Check[] = [
  { refusal: 'format', applies: (held, _run, format) => format !== undefined && !held.formats.includes(format) },
  { refusal: 'csv-of-many-metrics', applies: (held, run, format) => held.sharedHeader && format === 'csv' && run.metricCount > 1 },
  { refusal: 'layout', applies: (held, run) => run.layoutFrom === 'flag' && !held.files },
  { refusal: 'catch-up-without-state', applies: (held, run) => run.catchUp && held.state === 'named-only' && run.state === undefined },
];

/**
 * A run's format for its destination, once its options are checked against what the destination holds: the one
 * line of the first mistake (exit 2) otherwise, in the order above. Undefined where the state decides (a folder
 * keeps its format).
 */
export function checkOutputOptions(held: DestinationCapabilities, run: OutputOptions): OutputFormat | undefined {
  const refuseAny = (checks: readonly Check[], format: OutputFormat | undefined): void => {
    const refused = checks.find((check) => check.applies(held, run, format));
    if (refused !== undefined) throw new UsageError(held.refusals[refused.refusal] ?? IN_GENERAL[refused.refusal]);
  };
  refuseAny(BEFORE_FORMAT, undefined);
  const format = formatOf(held, run);
  if (run.shape === 'results' && format !== 'ndjson')
    throw new UsageError(`--shape results is NDJSON only, not ${format}; use --format ndjson`);
  refuseAny(AFTER_FORMAT, format);
  return format;
}

/**
 * The format a run asks for: a destination of one format has it; else `-f`, or for files the environment's too
 * (which describes a folder's files and does not stop a quick look elsewhere); else NDJSON for results; else the
 * destination's default, or none where its state keeps the format.
 */
function formatOf(held: DestinationCapabilities, run: OutputOptions): OutputFormat | undefined {
  const [only, ...others] = held.formats;
  if (only !== undefined && others.length === 0) return only;
  const stated = !held.files && run.formatFrom === 'env' ? undefined : run.format;
  if (stated !== undefined) return stated;
  if (run.shape === 'results') return 'ndjson';
  return held.keeps.includes('format') ? undefined : held.defaultFormat;
}
