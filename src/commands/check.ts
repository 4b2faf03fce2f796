import { exitCodeFor, messageOf, ReportedError, UsageError } from '../errors.js';
import { parseBaseUrl } from '../fetch/urls.js';
import { createLogger, useColor } from '../log/logger.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { probeMetrics } from '../metrics/probe.js';
import { createRedactor } from '../redact.js';
import { CHECK_OPTIONS } from './check-command.js';
import type { CommandAction } from './declaration.js';
import { resolveCredentials } from './import-options.js';
import { givenBy, readOptions } from './options.js';
import { SECRET_FLAG_WARNING } from './settings.js';

export const checkAction: CommandAction = async ({ context, reporter, options: collected }) => {
  const options = readOptions(CHECK_OPTIONS, collected, context.env);
  if (options.baseUrl === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(options.baseUrl);
  const credentials = await resolveCredentials(options, collected, context.env);
  const secrets = [{ clientId: credentials.clientId, secret: credentials.clientSecret }];
  const redact = createRedactor(secrets);
  reporter.use({ redact });
  const logger = createLogger({ stream: context.stderr, format: 'text', level: 'warn', credentials: secrets, color: useColor(context.stderr, context.env) });
  if (givenBy(CHECK_OPTIONS.clientSecret, collected, {}) === 'flag') logger.warn(SECRET_FLAG_WARNING);
  const results = await probeMetrics(METRIC_NAMES, {
    baseUrl,
    credentials,
    timeoutMs: options.timeout,
    retries: options.retries,
    ...(options.maxRps === undefined ? {} : { maxRps: options.maxRps }),
    maxWaitMs: options.maxWait,
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
  // The FAIL lines above said what is wrong.
  if (firstFailure !== undefined) throw new ReportedError(exitCodeFor(firstFailure));
};
