import { METRIC_NAMES, METRIC_TITLES } from '../metrics/names.js';
import { DAY_HELP, DAY_OPTIONS, type DayAction } from './accept-reopen-options.js';
import { BACKTEST_HELP, BACKTEST_OPTIONS } from './backtest-options.js';
import { BROKER_HELP, BROKER_OPTIONS } from './broker-options.js';
import { CHECK_HELP, CHECK_OPTIONS } from './check-options.js';
import { defineCommand, type CommandEntry } from './declaration.js';
import { IMPORT_OPTIONS, importHelp, type ImportCommandName } from './import-options.js';
import { SANDBOX_HELP, SANDBOX_OPTIONS } from './sandbox-options.js';
import { STATUS_HELP, STATUS_OPTIONS } from './status-options.js';
import { TOKEN_HELP, TOKEN_OPTIONS } from './token-options.js';

function importCommand(name: ImportCommandName, summary: string): CommandEntry {
  return defineCommand({
    name,
    summary,
    options: IMPORT_OPTIONS,
    help: importHelp(name),
    // HTTP, decoding, sinks and state are loaded only when an import runs, not for --help.
    action: async () => (await import('./import.js')).importAction(name),
  });
}

function dayCommand(name: DayAction, summary: string): CommandEntry {
  return defineCommand({
    name,
    arguments: '<metric>',
    summary,
    options: DAY_OPTIONS,
    help: DAY_HELP,
    action: async () => (await import('./accept-reopen.js')).dayAction(name),
  });
}

/**
 * Every command, once, in the order the help lists them: its name, arguments, summary, options and help, and its
 * action, loaded only when it runs.
 */
export const COMMANDS: readonly CommandEntry[] = [
  ...METRIC_NAMES.map((name) => importCommand(name, `import the ${METRIC_TITLES[name]} metric`)),
  importCommand('all', `import all ${METRIC_NAMES.length} metrics in one run`),
  defineCommand({
    name: 'status',
    summary: "say how far behind each metric's output is, its coverage and gaps, from the state alone (no credentials, no request)",
    options: STATUS_OPTIONS,
    help: STATUS_HELP,
    action: async () => (await import('./status.js')).statusAction,
  }),
  defineCommand({
    name: 'check',
    summary: 'test the URL and credentials: one tiny request per metric (page_size=1, yesterday); OK per metric or what is wrong',
    options: CHECK_OPTIONS,
    help: CHECK_HELP,
    action: async () => (await import('./check.js')).checkAction,
  }),
  dayCommand('accept', 'record days as final whatever their data (no request): --catch-up stops asking, status counts no gap'),
  dayCommand('reopen', 'make days pending again (no request), so the next --catch-up imports them'),
  defineCommand({
    name: 'backtest',
    arguments: '<metric>',
    summary: 'replay the rule that holds suspect days over the data already imported (no request): what it would hold, how often',
    options: BACKTEST_OPTIONS,
    help: BACKTEST_HELP,
    action: async () => (await import('./backtest.js')).backtestAction,
  }),
  defineCommand({
    name: 'token',
    summary: 'show a token from the OAuth 2.0 client-credentials exchange (or from a token broker), for debugging',
    options: TOKEN_OPTIONS,
    help: TOKEN_HELP,
    action: async () => (await import('./token.js')).tokenAction,
  }),
  defineCommand({
    name: 'broker',
    summary: 'run the token broker: GET /api/gatekeeper-token?application_package=X answers a cached JWT for app X',
    options: BROKER_OPTIONS,
    help: BROKER_HELP,
    action: async () => (await import('./broker.js')).brokerAction,
  }),
  defineCommand({
    name: 'sandbox',
    summary: 'run a local emulator of the metrics API and its auth server, with deterministic synthetic data',
    options: SANDBOX_OPTIONS,
    help: SANDBOX_HELP,
    action: async () => (await import('./sandbox.js')).sandboxAction,
  }),
];
