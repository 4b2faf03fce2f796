import type { CommandContext } from './context.js';
import { parseOptions, type CollectedOptions, type OptionSource, type OptionTable, type OptionValues } from './options.js';
import type { Reporter } from './reporter.js';

/** What a command's action gets: the outside world, the run's reporter, its options parsed, and its arguments. */
export interface CommandRun<Table extends OptionTable> extends CommandBase {
  readonly options: OptionValues<Table>;
  /** Where an option's value came from, for rules like "a flag of either kind beats both env vars". */
  readonly given: (key: keyof Table & string) => OptionSource;
  readonly args: readonly string[];
}

/** A command's action; it throws to fail (a `ReportedError` when it has already said why). */
export type CommandAction<Table extends OptionTable> = (run: CommandRun<Table>) => Promise<void>;

/** The outside world and the reporter: what every command and every step of one has. */
export interface CommandBase {
  readonly context: CommandContext;
  readonly reporter: Reporter;
}

/** What commander hands over when the command runs: the option texts it collected, not yet parsed. */
export interface CollectedRun extends CommandBase {
  readonly collected: CollectedOptions;
  readonly args: readonly string[];
}

/**
 * A command as the program declares it: name, arguments, summary, options and help, and its action, loaded only
 * when it runs (so `--help` and `--version` load no command's work).
 */
export interface CommandEntry {
  readonly name: string;
  /** Its arguments as commander declares them, e.g. `<metric>`. */
  readonly arguments?: string;
  /** One lower-case line, no final period: what the command does. */
  readonly summary: string;
  readonly options: OptionTable;
  /** Text after the options in its `--help`: examples, exit codes. */
  readonly help?: string;
  /** Parses the collected options with the command's table and runs its action. */
  readonly run: (run: CollectedRun) => Promise<void>;
}

interface CommandSpec<Table extends OptionTable> extends Omit<CommandEntry, 'run' | 'options'> {
  readonly options: Table;
  readonly action: () => Promise<CommandAction<Table>>;
}

/** One command's declaration: its action is typed by its own option table, which it never imports back. */
export function defineCommand<Table extends OptionTable>({ action, ...entry }: CommandSpec<Table>): CommandEntry {
  return {
    ...entry,
    run: async ({ context, reporter, collected, args }) => {
      const { values, given } = parseOptions(entry.options, collected, context.env);
      await (await action())({ context, reporter, options: values, given, args });
    },
  };
}
