import { Command, CommanderError } from 'commander';
import type { CommandContext } from './commands/context.js';
import { exitCodeFor, messageOf, UsageError } from './errors.js';
import { createLogger } from './log/logger.js';
import { VERSION } from './version.js';

/** Declares a command (or a family of them) on the program. */
type Register = (program: Command, context: CommandContext) => void;

/**
 * Every command, by name, with the module that declares it. Only the module of the command being run is loaded
 * (a cron job's import never loads fastify, and `--version` loads none); the others appear in the top-level help
 * by their summary alone.
 */
interface CommandEntry {
  readonly name: string;
  /** Its arguments as commander declares them, e.g. `<metric>`, so that the help lists them unloaded too. */
  readonly arguments?: string;
  readonly summary: string;
  readonly load: () => Promise<Register>;
}

const COMMANDS: readonly CommandEntry[] = [
  { name: 'unique-users', summary: 'import the Unique Users metric', load: async () => (await import('./commands/import.js')).registerImportCommands },
  { name: 'avg-screen-time', summary: 'import the Average Screen Time metric', load: async () => (await import('./commands/import.js')).registerImportCommands },
  { name: 'traffic', summary: 'import the Area Traffic metric', load: async () => (await import('./commands/import.js')).registerImportCommands },
  { name: 'all', summary: 'import all three metrics in one run', load: async () => (await import('./commands/import.js')).registerImportCommands },
  { name: 'status', summary: "say how far behind each metric's output is, its coverage and gaps, from the state alone (no credentials, no request)", load: async () => (await import('./commands/status.js')).registerStatusCommand },
  { name: 'check', summary: 'test the URL and credentials: one tiny request per metric (page_size=1, yesterday); OK per metric or what is wrong', load: async () => (await import('./commands/check.js')).registerCheckCommand },
  { name: 'accept', arguments: '<metric>', summary: 'record days as final whatever their data (no request): --catch-up stops asking, status counts no gap', load: async () => (await import('./commands/settle-days.js')).registerSettleCommands },
  { name: 'reopen', arguments: '<metric>', summary: 'make days pending again (no request), so the next --catch-up imports them', load: async () => (await import('./commands/settle-days.js')).registerSettleCommands },
  { name: 'token', summary: 'Do the OAuth 2.0 client-credentials exchange (or ask a token broker) and show the token, for debugging', load: async () => (await import('./commands/token.js')).registerTokenCommand },
  { name: 'broker', summary: 'Run the token broker: GET /api/gatekeeper-token?application_package=X answers a cached JWT for app X', load: async () => (await import('./commands/broker.js')).registerBrokerCommand },
  { name: 'sandbox', summary: 'run a local emulator of the metrics API and its auth server, with deterministic synthetic data', load: async () => (await import('./commands/sandbox.js')).registerSandboxCommand },
];

/** The command a command line names: its first word that is not an option (`help traffic` names traffic). */
function commandName(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/** A command as the top-level help lists it: the same whether its module was loaded or not. */
function subcommandTerm(command: Command): string {
  const args = command.registeredArguments.map((argument) => (argument.required ? `<${argument.name()}>` : `[${argument.name()}]`));
  return [command.name(), ...(command.name() === 'help' ? [] : ['[options]']), ...args].join(' ');
}

export async function buildProgram(context: CommandContext, args: readonly string[]): Promise<Command> {
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
    })
    // A command not loaded is declared without its options; every command has some.
    .configureHelp({ subcommandTerm });
  const named = COMMANDS.find((command) => command.name === commandName(args));
  if (named) (await named.load())(program, context);
  for (const command of COMMANDS) {
    if (program.commands.some((declared) => declared.name() === command.name)) continue;
    const stub = program.command(command.name).description(command.summary);
    if (command.arguments !== undefined) stub.arguments(command.arguments);
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

/** Runs one command line and returns the exit code; never exits the process itself. */
export async function runCli(args: readonly string[], context: CommandContext): Promise<number> {
  try {
    const program = await buildProgram(context, args);
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
