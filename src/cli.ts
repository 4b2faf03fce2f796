import { Command, CommanderError } from 'commander';
import { registerBrokerCommand } from './commands/broker.js';
import { registerCheckCommand } from './commands/check.js';
import type { CommandContext } from './commands/context.js';
import { registerImportCommands } from './commands/import.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerSettleCommands } from './commands/settle-days.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTokenCommand } from './commands/token.js';
import { exitCodeFor, messageOf, UsageError } from './errors.js';
import { createLogger } from './log/logger.js';
import { VERSION } from './version.js';

export function buildProgram(context: CommandContext): Command {
  const program = new Command('area-metrics')
    .description("Import a store-analytics vendor's daily area metrics into files, and the tools around it.")
    .version(VERSION)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
      // Commander's own messages become our single error line (printed by runCli), not a second one.
      outputError: () => {},
    });
  registerImportCommands(program, context);
  registerStatusCommand(program, context);
  registerCheckCommand(program, context);
  registerSettleCommands(program, context);
  registerTokenCommand(program, context);
  registerBrokerCommand(program, context);
  registerSandboxCommand(program, context);
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

/** Runs one command line and returns the exit code; never exits the process itself. */
export async function runCli(args: readonly string[], context: CommandContext): Promise<number> {
  const program = buildProgram(context);
  try {
    await program.parseAsync([...args], { from: 'user' });
    return context.exitCode ?? 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
        return 0;
      }
      const usage = new UsageError(`${usageLine(error)} (see --help)`);
      if (requestedLogFormat(args) === 'json') {
        createLogger({ stream: context.stderr, format: 'json', level: 'error' }).error(usage.message);
      } else {
        context.reportError(usage.message);
      }
      return usage.exitCode;
    }
    const redact = context.redact ?? ((text: string) => text);
    context.reportError(redact(messageOf(error)));
    if (exitCodeFor(error) === 1 && error instanceof Error && error.stack) {
      context.reportError(`internal error, please report it with this trace:\n${redact(error.stack)}`);
    }
    return exitCodeFor(error);
  }
}
