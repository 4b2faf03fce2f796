import type { CommandDeclaration } from './declaration.js';
import { IMPORT_OPTIONS } from './import-options.js';
import { integer, seconds, valueOption } from './options.js';

/** The import's URL and credential options, and a shorter request budget: a check answers in seconds or says why not. */
export const CHECK_OPTIONS = {
  baseUrl: IMPORT_OPTIONS.baseUrl,
  clientId: IMPORT_OPTIONS.clientId,
  clientSecret: IMPORT_OPTIONS.clientSecret,
  clientSecretFile: IMPORT_OPTIONS.clientSecretFile,
  maxRps: IMPORT_OPTIONS.maxRps,
  maxWait: IMPORT_OPTIONS.maxWait,
  timeout: valueOption({ flags: '--timeout <seconds>', parse: seconds(3600), default: 30_000, defaultText: '30', description: 'per-request timeout' }),
  retries: valueOption({ flags: '--retries <n>', parse: integer(0, 20), default: 1, description: 'retries per request on network errors, timeouts, 429 and 5xx' }),
};

export const CHECK_DECLARATION: CommandDeclaration = {
  options: CHECK_OPTIONS,
  help: `
Exit codes: 0 every metric answered, 2 bad options, 3 credentials rejected, 4 URL unreachable or failing,
5 the answer is not the API's.

Examples:
  # once at setup, with the cron job's environment
  $ AREA_METRICS_CLIENT_SECRET_FILE=/etc/area-metrics/secret area-metrics check --base-url https://api.example.com --client-id acme`,
  action: async () => (await import('./check.js')).checkAction,
};
