import type { CommandContext } from './context.js';
import type { CollectedOptions, OptionTable } from './options.js';
import type { Reporter } from './reporter.js';

/** What a command's action gets: the outside world, the run's reporter, its options as typed and its arguments. */
export interface CommandRun {
  readonly context: CommandContext;
  readonly reporter: Reporter;
  readonly options: CollectedOptions;
  readonly args: readonly string[];
}

/** A command's action; it throws to fail (a `ReportedError` when it has already said why). */
export type CommandAction = (run: CommandRun) => Promise<void>;

/**
 * What a command's `--help` shows beyond its summary, and its action, loaded only when it runs. A declaration module
 * stays light: options and parsers, nothing of what the command does.
 */
export interface CommandDeclaration {
  readonly options: OptionTable;
  /** Text after the options in its `--help`: examples, exit codes. */
  readonly help?: string;
  readonly action: () => Promise<CommandAction>;
}

/**
 * A command as the program lists it: its name, arguments and summary, and its declaration module, loaded only when
 * the command line names it (so `--help` and `--version` load none).
 */
export interface CommandEntry {
  readonly name: string;
  /** Its arguments as commander declares them, e.g. `<metric>`. */
  readonly arguments?: string;
  /** One lower-case line, no final period: what the command does. */
  readonly summary: string;
  readonly declaration: () => Promise<CommandDeclaration>;
}
