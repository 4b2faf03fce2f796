import type { Command } from 'commander';
import { exitCodeFor, messageOf, UsageError } from '../errors.js';
import { parseBaseUrl } from '../fetch/urls.js';
import { createLogger, useColor } from '../log/logger.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { probeMetrics } from '../metrics/probe.js';
import { createRedactor } from '../redact.js';
import type { CommandContext } from './context.js';
import { IMPORT_OPTIONS } from './import-options.js';
import { addOptions, givenBy, readOptions, valueOption, type CollectedOptions } from './options.js';
import { resolveClientSecret } from './settings.js';

/** The import's URL, credential and timeout options, as the import declares them; a check waits less by default. */
const CHECK_OPTIONS = {
  baseUrl: IMPORT_OPTIONS.baseUrl,
  clientId: IMPORT_OPTIONS.clientId,
  clientSecret: IMPORT_OPTIONS.clientSecret,
  clientSecretFile: IMPORT_OPTIONS.clientSecretFile,
  timeout: valueOption({ ...IMPORT_OPTIONS.timeout, default: 30_000, defaultText: '30' }),
};

async function runCheck(collected: CollectedOptions, context: CommandContext): Promise<void> {
  const options = readOptions(CHECK_OPTIONS, collected, context.env);
  if (options.baseUrl === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(options.baseUrl);
  const timeoutMs = options.timeout;
  const { clientId } = options;
  if (clientId === undefined) throw new UsageError('missing --client-id (or AREA_METRICS_CLIENT_ID)');
  // The secret's own precedence (a flag of either kind beats both env vars) needs to know which were flags.
  const flag = (key: 'clientSecret' | 'clientSecretFile'): string | undefined =>
    givenBy(CHECK_OPTIONS[key], collected, {}) === 'flag' ? options[key] : undefined;
  const { secret } = await resolveClientSecret({ clientSecret: flag('clientSecret'), clientSecretFile: flag('clientSecretFile') }, context.env);
  const credentials = [{ clientId, secret }];
  const redact = createRedactor(credentials);
  context.redact = redact;
  const logger = createLogger({ stream: context.stderr, format: 'text', level: 'warn', credentials, color: useColor(context.stderr, context.env) });
  const results = await probeMetrics(METRIC_NAMES, {
    baseUrl,
    credentials: { clientId, clientSecret: secret },
    timeoutMs,
    retries: 1,
    logger,
    signal: context.signal,
    now: new Date(),
    env: context.env,
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
    .description('test the URL and credentials: one tiny request per metric (page_size=1, yesterday); OK per metric or what is wrong');
  addOptions(command, CHECK_OPTIONS)
    .addHelpText(
      'after',
      `
Exit codes: 0 every metric answered, 2 bad options, 3 credentials rejected, 4 URL unreachable or failing,
5 the answer is not the API's.

Examples:
  # once at setup, with the cron job's environment
  $ AREA_METRICS_CLIENT_SECRET_FILE=/etc/area-metrics/secret area-metrics check --base-url https://api.example.com --client-id acme`,
    )
    .action(async (collected: CollectedOptions) => {
      await runCheck(collected, context);
    });
}
