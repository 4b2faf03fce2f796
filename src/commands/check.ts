import { Option, type Command } from 'commander';
import { exitCodeFor, messageOf, UsageError } from '../errors.js';
import { parseBaseUrl } from '../fetch/urls.js';
import { createLogger, useColor } from '../log/logger.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { probeMetrics } from '../metrics/probe.js';
import { createRedactor } from '../redact.js';
import type { CommandContext } from './context.js';
import { IMPORT_OPTIONS, type RawImportOptions } from './import-options.js';
import { envValue, resolveClientSecret } from './settings.js';

/** The import's URL, credential and timeout options, as the import declares them. */
const CHECK_OPTION_KEYS = ['baseUrl', 'clientId', 'clientSecret', 'clientSecretFile', 'timeout'];

async function runCheck(raw: RawImportOptions, context: CommandContext): Promise<void> {
  const text = (key: string): string | undefined => {
    const flag = raw[key];
    if (typeof flag === 'string') return flag;
    const env = IMPORT_OPTIONS.find((option) => option.key === key)?.env;
    return env === undefined ? undefined : envValue(context.env, env);
  };
  const baseUrlText = text('baseUrl');
  if (baseUrlText === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(baseUrlText);
  const timeoutText = text('timeout') ?? '30';
  const timeoutMs = /^\d+(\.\d+)?$/.test(timeoutText.trim()) ? Math.round(Number(timeoutText.trim()) * 1000) : Number.NaN;
  if (!(timeoutMs >= 1 && timeoutMs <= 3_600_000)) throw new UsageError(`--timeout ${JSON.stringify(timeoutText)} must be a number of seconds from 0.001 to 3600`);
  const clientId = text('clientId');
  if (clientId === undefined) throw new UsageError('missing --client-id (or AREA_METRICS_CLIENT_ID)');
  const flag = (key: string): string | undefined => (typeof raw[key] === 'string' ? raw[key] : undefined);
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
  for (const spec of IMPORT_OPTIONS.filter((option) => CHECK_OPTION_KEYS.includes(option.key))) {
    const suffix = [spec.env ? `env: ${spec.env}` : '', spec.key === 'timeout' ? 'default: 30' : ''].filter(Boolean).join(', ');
    command.addOption(new Option(spec.flags, suffix ? `${spec.description} (${suffix})` : spec.description));
  }
  command
    .addHelpText(
      'after',
      `
Exit codes: 0 every metric answered, 2 bad options, 3 credentials rejected, 4 URL unreachable or failing,
5 the answer is not the API's.

Examples:
  # once at setup, with the cron job's environment
  $ AREA_METRICS_CLIENT_SECRET_FILE=/etc/area-metrics/secret area-metrics check --base-url https://api.example.com --client-id acme`,
    )
    .action(async (raw: RawImportOptions) => {
      await runCheck(raw, context);
    });
}
