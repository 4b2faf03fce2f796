import type { CommandEntry } from './declaration.js';

/** The metric each import command imports, or all of them (the names are METRIC_NAMES', not loaded here). */
const IMPORTS = [
  { name: 'unique-users', summary: 'import the Unique Users metric' },
  { name: 'avg-screen-time', summary: 'import the Average Screen Time metric' },
  { name: 'traffic', summary: 'import the Area Traffic metric' },
  { name: 'all', summary: 'import all three metrics in one run' },
] as const;

export type ImportCommandName = (typeof IMPORTS)[number]['name'];

/**
 * Every command, once, in the order the help lists them: name, arguments and summary here, its options, help and
 * action in its `<name>-command.ts`, loaded only when the command line names it.
 */
export const COMMANDS: readonly CommandEntry[] = [
  ...IMPORTS.map(({ name, summary }) => ({ name, summary, declaration: async () => (await import('./import-command.js')).importDeclaration(name) })),
  {
    name: 'status',
    summary: "say how far behind each metric's output is, its coverage and gaps, from the state alone (no credentials, no request)",
    declaration: async () => (await import('./status-command.js')).STATUS_DECLARATION,
  },
  {
    name: 'check',
    summary: 'test the URL and credentials: one tiny request per metric (page_size=1, yesterday); OK per metric or what is wrong',
    declaration: async () => (await import('./check-command.js')).CHECK_DECLARATION,
  },
  {
    name: 'accept',
    arguments: '<metric>',
    summary: 'record days as final whatever their data (no request): --catch-up stops asking, status counts no gap',
    declaration: async () => (await import('./accept-reopen-command.js')).dayDeclaration('accept'),
  },
  {
    name: 'reopen',
    arguments: '<metric>',
    summary: 'make days pending again (no request), so the next --catch-up imports them',
    declaration: async () => (await import('./accept-reopen-command.js')).dayDeclaration('reopen'),
  },
  {
    name: 'token',
    summary: 'show a token from the OAuth 2.0 client-credentials exchange (or from a token broker), for debugging',
    declaration: async () => (await import('./token-command.js')).TOKEN_DECLARATION,
  },
  {
    name: 'broker',
    summary: 'run the token broker: GET /api/gatekeeper-token?application_package=X answers a cached JWT for app X',
    declaration: async () => (await import('./broker-command.js')).BROKER_DECLARATION,
  },
  {
    name: 'sandbox',
    summary: 'run a local emulator of the metrics API and its auth server, with deterministic synthetic data',
    declaration: async () => (await import('./sandbox-command.js')).SANDBOX_DECLARATION,
  },
];
