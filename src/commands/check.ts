import { exitCodeFor, messageOf, ReportedError, UsageError } from '../errors.js';
import { parseBaseUrl } from '../fetch/urls.js';
import { METRIC_NAMES } from '../metrics/descriptors.js';
import { probeMetrics } from '../metrics/probe.js';
import type { CHECK_OPTIONS } from './check-options.js';
import { nowOf } from './clock.js';
import { resolveCredentials, SECRET_FLAG_WARNING } from './credentials.js';
import type { CommandAction } from './declaration.js';
import { commandLogs } from './preamble.js';

export const checkAction: CommandAction<typeof CHECK_OPTIONS> = async ({ context, reporter, options, given }) => {
  if (options.baseUrl === undefined) throw new UsageError('missing --base-url (or AREA_METRICS_BASE_URL)');
  const baseUrl = parseBaseUrl(options.baseUrl);
  const { clientId, clientSecret, secretOnCommandLine } = await resolveCredentials(options, given);
  const credentials = { clientId, clientSecret };
  const { logger, redact } = commandLogs({ context, reporter, credentials: [{ clientId, secret: clientSecret }] }, { level: 'warn' });
  if (secretOnCommandLine) logger.warn(SECRET_FLAG_WARNING);
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
    now: nowOf(context.env),
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
