import type { Command } from 'commander';
import { requestClientCredentialsToken, tokenEndpointUrl, type TokenResponse } from '../auth/client-credentials.js';
import { brokerTokenUrl, requestBrokerToken } from '../auth/broker-client.js';
import { describeToken, formatHuman, formatJson, formatRaw } from '../auth/token-report.js';
import { UnavailableError, UsageError } from '../errors.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import { createLogger, useColor } from '../log/logger.js';
import { createRedactor } from '../redact.js';
import type { CommandContext } from './context.js';
import {
  addOptions,
  givenBy,
  integer,
  readOptions,
  seconds,
  switchOption,
  text,
  valueOption,
  type CollectedOptions,
  type OptionValues,
} from './options.js';
import { resolveClientSecret } from './settings.js';

const TOKEN_OPTIONS = {
  authUrl: valueOption({ flags: '--auth-url <url>', env: 'AREA_METRICS_AUTH_URL', parse: text, description: 'auth server root; POSTs to {url}/oauth2/token' }),
  clientId: valueOption({ flags: '--client-id <id>', env: 'AREA_METRICS_CLIENT_ID', parse: text, description: 'OAuth client id' }),
  clientSecret: valueOption({ flags: '--client-secret <secret>', env: 'AREA_METRICS_CLIENT_SECRET', parse: text, description: 'OAuth client secret' }),
  clientSecretFile: valueOption({ flags: '--client-secret-file <path>', env: 'AREA_METRICS_CLIENT_SECRET_FILE', parse: text, description: 'read the client secret from a file, trailing newline trimmed' }),
  scope: valueOption({ flags: '--scope <scope>', parse: text, description: 'scope to request (sent only when given)' }),
  broker: valueOption({ flags: '--broker <client_server_url>', parse: text, description: "ask this token broker's /api/gatekeeper-token instead (needs --app)" }),
  app: valueOption({ flags: '--app <application_package>', parse: text, description: 'the application package to ask the broker for' }),
  raw: switchOption({ flags: '--raw', description: 'print only the token on stdout' }),
  json: switchOption({ flags: '--json', description: "print the server's JSON plus decoded header and claims on stdout" }),
  timeout: valueOption({ flags: '--timeout <seconds>', parse: seconds(3600), default: 30_000, defaultText: '30', description: 'per request timeout' }),
  retries: valueOption({ flags: '--retries <n>', parse: integer(0, 10), default: 0, description: 'retries on network errors, timeouts and 5xx' }),
  verbose: switchOption({ flags: '-v, --verbose', description: 'say where each setting came from and what is sent (never the secret)' }),
};

type TokenOptions = OptionValues<typeof TOKEN_OPTIONS>;

type Target =
  | { kind: 'auth-server'; authUrl: string; clientId: string; clientSecret: string; scope?: string }
  | { kind: 'broker'; brokerUrl: string; applicationPackage: string };


const EXAMPLES = `
Examples:
  $ area-metrics token --auth-url https://auth.example.com --client-id my-id --client-secret-file ~/.secret
  $ AREA_METRICS_AUTH_URL=https://auth.example.com AREA_METRICS_CLIENT_ID=my-id \\
      AREA_METRICS_CLIENT_SECRET=... area-metrics token --json | jq .claims
  $ export TOKEN=$(area-metrics token --raw)
  $ area-metrics token --broker https://backend.example.com --app com.acme.shop

Exit codes: 0 token shown, 2 usage, 3 credentials or application refused, 4 server unreachable or failing,
5 a 200 answer without a usable access_token.
The JWT signature is never verified: this command is for looking, not for trusting.
`;

async function resolveTarget(
  options: TokenOptions,
  collected: CollectedOptions,
  env: NodeJS.ProcessEnv,
): Promise<{ target: Target; secretSource?: string }> {
  const byFlag = (key: keyof typeof TOKEN_OPTIONS): boolean => givenBy(TOKEN_OPTIONS[key], collected, {}) === 'flag';
  if (options.raw && options.json) throw new UsageError('--raw and --json cannot be used together');
  if (options.app !== undefined && options.broker === undefined) throw new UsageError('--app needs --broker');

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
    return { target: { kind: 'broker', brokerUrl: options.broker, applicationPackage: options.app } };
  }

  const { authUrl, clientId } = options;
  if (authUrl === undefined) throw new UsageError('missing auth URL: pass --auth-url or set AREA_METRICS_AUTH_URL');
  if (clientId === undefined) throw new UsageError('missing client id: pass --client-id or set AREA_METRICS_CLIENT_ID');

  const { secret: clientSecret, source } = await resolveClientSecret(
    {
      clientSecret: byFlag('clientSecret') ? options.clientSecret : undefined,
      clientSecretFile: byFlag('clientSecretFile') ? options.clientSecretFile : undefined,
    },
    env,
  );
  return {
    target: { kind: 'auth-server', authUrl, clientId, clientSecret, ...(options.scope ? { scope: options.scope } : {}) },
    secretSource: source,
  };
}

async function runToken(collected: CollectedOptions, context: CommandContext): Promise<void> {
  const options = readOptions(TOKEN_OPTIONS, collected, context.env);
  const { target, secretSource } = await resolveTarget(options, collected, context.env);
  const credentials = target.kind === 'auth-server' ? [{ clientId: target.clientId, secret: target.clientSecret }] : [];
  // Every line from here on, the final error line included, is redacted: a server may echo what it was sent.
  context.redact = createRedactor(credentials);
  const logger = createLogger({
    stream: context.stderr,
    format: 'text',
    level: options.verbose ? 'debug' : 'info',
    credentials,
    color: useColor(context.stderr, context.env),
  });
  if (secretSource !== undefined) logger.debug(`client secret from ${secretSource}`);

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
      logger.debug(`GET ${brokerTokenUrl(target.brokerUrl, target.applicationPackage).toString()}`);
      token = await requestBrokerToken(http, { brokerUrl: target.brokerUrl, applicationPackage: target.applicationPackage });
    }
  } catch (error) {
    if (error instanceof UnavailableError) {
      const server = target.kind === 'broker' ? 'the broker URL and that the broker' : 'the auth URL and that the auth server';
      throw new UnavailableError(`${error.message}; check ${server} is up and reachable`, { cause: error });
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
}

export function registerTokenCommand(program: Command, context: CommandContext): void {
  const command = program.command('token');
  addOptions(command, TOKEN_OPTIONS)
    .description(
      'Do the OAuth 2.0 client-credentials exchange (or ask a token broker) and show the token, for debugging',
    )
    .addHelpText('after', EXAMPLES)
    .action(async (collected: CollectedOptions) => {
      await runToken(collected, context);
    });
}
