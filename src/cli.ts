import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/command-list.js';
import type { CommandContext } from './commands/context.js';
import { addOptions } from './commands/options.js';
import { HELP_WIDTH } from './commands/prepared-help.js';
import { Reporter } from './commands/reporter.js';
import { UsageError } from './errors.js';
import { createLogger } from './log/logger.js';
import { VERSION } from './version.js';

/** The command a command line names: its first word that is not an option (`help traffic` names traffic). */
function commandName(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/** A command as the top-level help lists it: the same whether its declaration was loaded or not (each has options). */
function subcommandTerm(command: Command): string {
  const args = command.registeredArguments.map((argument) => (argument.required ? `<${argument.name()}>` : `[${argument.name()}]`));
  return [command.name(), ...(command.name() === 'help' ? [] : ['[options]']), ...args].join(' ');
}

/**
 * The program for a command line: every command listed by its summary, and only the one it names declared in full
 * (options, help, action); its action is loaded only when it runs.
 */
export function buildProgram(context: CommandContext, reporter: Reporter, args: readonly string[]): Command {
  const program = new Command('area-metrics')
    .description("Import a store-analytics vendor's daily area metrics into files, and the tools around it.")
    .version(VERSION)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
      // Commander's own messages become our single error line (printed by the reporter), not a second one.
      outputError: () => {},
      // The command's stdout decides (commander's default read the process's), and help is wrapped at 80 columns
      // even in a wider terminal, for reading, so the text the build prepares serves any output but a narrower one.
      getOutHelpWidth: () => Math.min(HELP_WIDTH, context.stdout.isTTY === true ? (context.stdout.columns ?? HELP_WIDTH) : HELP_WIDTH),
    })
    .configureHelp({ subcommandTerm });
  const named = commandName(args);
  for (const entry of COMMANDS) {
    const command = program.command(entry.name).description(entry.summary);
    if (entry.arguments !== undefined) command.arguments(entry.arguments);
    if (entry.name !== named) continue;
    addOptions(command, entry.options);
    if (entry.help !== undefined) command.addHelpText('after', entry.help);
    command.action(async (...params: unknown[]) => {
      const self = params.at(-1) as Command;
      // A bad option value is reported in the format the command line asked for (every stderr line JSON).
      if (requestedLogFormat(args) === 'json')
        reporter.use({ logger: createLogger({ stream: context.stderr, format: 'json', level: 'error' }) });
      await entry.run({ context, reporter, collected: self.opts(), args: self.processedArgs as string[] });
    });
  }
  return program;
}

/** An option as typed (`--name=value`, `-xvalue`) shown by its name only: the value may be a secret. */
function optionName(typed: string): string {
  return typed.startsWith('--') ? (typed.split('=')[0] as string) : typed.slice(0, 2);
}

/** Commander's message as one line: no value of an unknown option, and its "Did you mean" on the same line. */
function usageLine(error: CommanderError): string {
  let message = error.message.replace(/^error: /, '');
  if (error.code === 'commander.unknownOption') {
    message = message.replace(/^unknown option '(.*)'(?=\n|$)/, (_match, typed: string) => `unknown option '${optionName(typed)}'`);
  }
  return message.replace(/\n\(Did you mean (.+)\?\)/, '; did you mean $1?').replace(/\s*\n\s*/g, ' ');
}

/**
 * `--log-format` as the command line asks for it (the last one wins, as in commander), for errors found before a
 * command has parsed its options.
 */
function requestedLogFormat(args: readonly string[]): string | undefined {
  let format: string | undefined;
  for (let index = 0; index < args.length && args[index] !== '--'; index++) {
    const arg = args[index] as string;
    if (arg === '--log-format') format = args[index + 1];
    else if (arg.startsWith('--log-format=')) format = arg.slice('--log-format='.length);
  }
  return format;
}

/** One run of a command line, with the reporter that decides its exit code (the process edge reads it early too). */
export interface Cli {
  readonly reporter: Reporter;
  /** Runs the command line and returns the exit code; never exits the process itself. */
  run(args: readonly string[]): Promise<number>;
}

export function createCli(context: CommandContext): Cli {
  const reporter = new Reporter(context.stderr);
  return {
    reporter,
    async run(args) {
      try {
        await buildProgram(context, reporter, args).parseAsync([...args], { from: 'user' });
        return reporter.exitCodeSoFar ?? 0;
      } catch (error) {
        if (!(error instanceof CommanderError)) return reporter.report(error);
        if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
        const usage = new UsageError(`${usageLine(error)} (see --help)`);
        if (requestedLogFormat(args) === 'json')
          reporter.use({ logger: createLogger({ stream: context.stderr, format: 'json', level: 'error' }) });
        return reporter.report(usage);
      }
    },
  };
}

/** Runs one command line in this process with a fresh reporter and returns the exit code. */
export function runCli(args: readonly string[], context: CommandContext): Promise<number> {
  return createCli(context).run(args);
}
