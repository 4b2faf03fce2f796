import { requestClientCredentialsToken, tokenEndpointUrl, type TokenResponse } from '../auth/client-credentials.js';
import { brokerTokenUrl, requestBrokerToken } from '../auth/broker-client.js';
import { describeToken, formatHuman, formatJson, formatRaw } from '../auth/token-report.js';
import { UnavailableError, UsageError } from '../errors.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import { UNREACHABLE_HINT } from '../fetch/outage.js';
import { ATTESTATION_FLAG_WARNING, resolveCredentials, SECRET_FLAG_WARNING } from './credentials.js';
import type { CommandAction, CommandRun } from './declaration.js';
import { envValue } from './options.js';
import { commandLogs } from './preamble.js';
import type { TOKEN_OPTIONS, TokenOptions } from './token-options.js';

type Target =
  | { kind: 'auth-server'; authUrl: string; clientId: string; clientSecret: string; scope?: string }
  | { kind: 'broker'; brokerUrl: string; applicationPackage: string; attestation?: { header: string; token: string } };

async function resolveTarget(
  options: TokenOptions,
  given: CommandRun<typeof TOKEN_OPTIONS>['given'],
  env: NodeJS.ProcessEnv,
): Promise<{ target: Target; secretSource?: string }> {
  const byFlag = (key: keyof typeof TOKEN_OPTIONS): boolean => given(key) === 'flag';
  if (options.raw && options.json) throw new UsageError('--raw and --json cannot be used together');
  if (options.app !== undefined && options.broker === undefined) throw new UsageError('--app needs --broker');
  if (options.broker === undefined && byFlag('attestationToken')) throw new UsageError('--attestation-token needs --broker');

  if (options.broker !== undefined) {
    // Explicit client-credential flags with --broker mean a confused command line; env vars are ignored silently
    // because a shell set up for the import commands has them.
    const stray = (['authUrl', 'clientId', 'clientSecret', 'clientSecretFile', 'scope'] as const).find(byFlag);
    if (stray) {
      const flag = `--${stray.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
      throw new UsageError(`${flag} cannot be used with --broker (the broker holds the credentials)`);
    }
    if (options.app === undefined || options.app.trim() === '') {
      throw new UsageError('--broker needs --app <application_package>');
    }
    const attestation =
      options.attestationToken === undefined ? {} : { attestation: { header: options.attestationHeader, token: options.attestationToken } };
    return { target: { kind: 'broker', brokerUrl: options.broker, applicationPackage: options.app, ...attestation } };
  }

  const { authUrl } = options;
  if (authUrl === undefined) {
    // A shell set up for the import has the metrics API's URL, which is not where tokens come from.
    const apiOnly =
      envValue(env, 'AREA_METRICS_BASE_URL') !== undefined
        ? ' (AREA_METRICS_BASE_URL is the metrics API; tokens come from the auth server)'
        : '';
    throw new UsageError(`missing auth URL: pass --auth-url or set AREA_METRICS_AUTH_URL${apiOnly}`);
  }
  const { clientId, clientSecret, secretSource } = await resolveCredentials(options, given);
  return {
    target: { kind: 'auth-server', authUrl, clientId, clientSecret, ...(options.scope ? { scope: options.scope } : {}) },
    secretSource,
  };
}

export const tokenAction: CommandAction<typeof TOKEN_OPTIONS> = async ({ context, reporter, options, given }) => {
  const { target, secretSource } = await resolveTarget(options, given, context.env);
  const credentials =
    target.kind === 'auth-server'
      ? [{ clientId: target.clientId, secret: target.clientSecret }]
      : target.attestation !== undefined
        ? [{ secret: target.attestation.token }]
        : [];
  // Every line from here on, the final error line included, is redacted: a server may echo what it was sent.
  const { logger } = commandLogs({ context, reporter, credentials }, { level: options.verbose ? 'debug' : 'info' });
  if (secretSource !== undefined) logger.debug(`client secret from ${secretSource}`);
  if (secretSource === '--client-secret') logger.warn(SECRET_FLAG_WARNING);
  if (target.kind === 'broker' && target.attestation !== undefined && given('attestationToken') === 'flag') {
    logger.warn(ATTESTATION_FLAG_WARNING);
  }

  const timeoutMs = options.timeout;
  const dispatcher = createDispatcher({ timeoutMs, connections: 1, env: context.env });
  const http = new HttpClient({
    dispatcher,
    timeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retries: options.retries },
    logger,
    signal: context.signal,
  });

  const requestSentAt = new Date();
  let token: TokenResponse;
  try {
    if (target.kind === 'auth-server') {
      logger.debug(
        `POST ${tokenEndpointUrl(target.authUrl).toString()} as client ${JSON.stringify(target.clientId)}` +
          ` (grant_type=client_credentials${target.scope ? `, scope=${JSON.stringify(target.scope)}` : ''})`,
      );
      token = await requestClientCredentialsToken(http, {
        authUrl: target.authUrl,
        credentials: { clientId: target.clientId, clientSecret: target.clientSecret },
        ...(target.scope ? { scope: target.scope } : {}),
      });
    } else {
      const attestation = target.attestation;
      logger.debug(
        `GET ${brokerTokenUrl(target.brokerUrl, target.applicationPackage).toString()}${attestation === undefined ? '' : ` with an attestation token in ${attestation.header}`}`,
      );
      token = await requestBrokerToken(http, {
        brokerUrl: target.brokerUrl,
        applicationPackage: target.applicationPackage,
        ...(attestation !== undefined ? { attestation } : {}),
      });
    }
  } catch (error) {
    if (error instanceof UnavailableError) {
      // One hint, this command's: the client's generic one would say the same thing again.
      const server = target.kind === 'broker' ? 'the broker URL and that the broker' : 'the auth URL and that the auth server';
      const message = error.message.endsWith(`; ${UNREACHABLE_HINT}`)
        ? error.message.slice(0, -UNREACHABLE_HINT.length - 2)
        : error.message;
      throw new UnavailableError(`${message}; check ${server} is up and reachable`, { cause: error });
    }
    throw error;
  } finally {
    await dispatcher.close().catch(() => {});
  }
  const now = new Date();
  logger.debug(`answered in ${now.getTime() - requestSentAt.getTime()} ms`);

  const report = describeToken(token, { origin: target.kind, requestSentAt, now });
  logger.debug(`expiry taken from: ${report.lifetime.source}`);
  for (const warning of report.warnings) logger.warn(warning);
  const output = options.raw ? formatRaw(report) : options.json ? formatJson(report) : formatHuman(report);
  context.stdout.write(output);
};
