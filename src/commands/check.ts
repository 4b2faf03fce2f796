import type { Command } from 'commander';
import { exitCodeFor, messageOf, UsageError } from '../errors.js';
import { parseBaseUrl } from '../fetch/urls.js';
import { createLogger, useColor } from '../log/logger.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { probeMetrics } from '../metrics/probe.js';
import { createRedactor } from '../redact.js';
import type { CommandContext } from './context.js';
import { IMPORT_OPTIONS, resolveCredentials } from './import-options.js';
import { addOptions, integer, readOptions, seconds, valueOption, type CollectedOptions } from './options.js';

/** The import's URL and credential options, and a shorter request budget: a check answers in seconds or says why not. */
const CHECK_OPTIONS = {
  baseUrl: IMPORT_OPTIONS.baseUrl,
  clientId: IMPORT_OPTIONS.clientId,
  clientSecret: IMPORT_OPTIONS.clientSecret,
  clientSecretFile: IMPORT_OPTIONS.clientSecretFile,
  maxRps: IMPORT_OPTIONS.maxRps,
  timeout: valueOption({ flags: '--timeout <seconds>', parse: seconds(3600), default: 30_000, defaultText: '30', description: 'per-request timeout' }),
  retries: valueOption({ flags: '--retries <n>', parse: integer(0, 20), default: 1, description: 'retries per request on network errors, timeouts, 429 and 5xx' }),
};

async function runCheck(collected: CollectedOptions, context: CommandContext): Promise<void> {
  const options = readOptions(CHECK_OPTIONS, collected, context.env);
  if (options.baseUrl === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(options.baseUrl);
  const credentials = await resolveCredentials(options, collected, context.env);
  const secrets = [{ clientId: credentials.clientId, secret: credentials.clientSecret }];
  const redact = createRedactor(secrets);
  context.redact = redact;
  const logger = createLogger({ stream: context.stderr, format: 'text', level: 'warn', credentials: secrets, color: useColor(context.stderr, context.env) });
  const results = await probeMetrics(METRIC_NAMES, {
    baseUrl,
    credentials,
    timeoutMs: options.timeout,
    retries: options.retries,
    ...(options.maxRps === undefined ? {} : { maxRps: options.maxRps }),
    logger,
    env: context.env,
    signal: context.signal,
    ...(context.clock ? { clock: context.clock } : {}),
    now: new Date(),
  });
  let firstFailure: unknown;
  for (const result of results) {
    if (result.status === 'ok') {
      context.stdout.write(`OK    ${result.metric}: ${result.count} result${result.count === 1 ? '' : 's'} for ${result.day}\n`);
    } else if (result.status === 'failed') {
      firstFailure ??= result.error;
      context.stdout.write(redact(`FAIL  ${result.metric}: ${messageOf(result.error)}\n`));
    } else {
      context.stdout.write(`-     ${result.metric}: not checked (the failure above applies to every metric)\n`);
    }
  }
  if (firstFailure !== undefined) context.exitCode = exitCodeFor(firstFailure);
}

export function registerCheckCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('check')
    .description('test the URL and credentials: one tiny request per metric (page_size=1, yesterday); OK per metric or what is wrong')
    .addHelpText(
      'after',
      `
Exit codes: 0 every metric answered, 2 bad options, 3 credentials rejected, 4 URL unreachable or failing,
5 the answer is not the API's.

Examples:
  # once at setup, with the cron job's environment
  $ AREA_METRICS_CLIENT_SECRET_FILE=/etc/area-metrics/secret area-metrics check --base-url https://api.example.com --client-id acme`,
    );
  addOptions(command, CHECK_OPTIONS).action(async (collected: CollectedOptions) => {
    await runCheck(collected, context);
  });
}
