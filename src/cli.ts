import { Command, CommanderError } from 'commander';
import { registerBrokerCommand } from './commands/broker.js';
import type { CommandContext } from './commands/context.js';
import { registerImportCommands } from './commands/import.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerTokenCommand } from './commands/token.js';
import { exitCodeFor, messageOf, UsageError } from './errors.js';
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
  registerTokenCommand(program, context);
  registerBrokerCommand(program, context);
  registerSandboxCommand(program, context);
  return program;
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
      const usage = new UsageError(`${error.message.replace(/^error: /, '')} (see --help)`);
      context.reportError(usage.message);
      return usage.exitCode;
    }
    context.reportError(messageOf(error));
    if (exitCodeFor(error) === 1 && error instanceof Error && error.stack) {
      context.stderr.write(`internal error, please report it with this trace:\n${error.stack}\n`);
    }
    return exitCodeFor(error);
  }
}
