import { Option, type Command } from 'commander';
import { requestClientCredentialsToken, tokenEndpointUrl, type TokenResponse } from '../auth/client-credentials.js';
import { brokerTokenUrl, requestBrokerToken } from '../auth/broker-client.js';
import { describeToken, formatHuman, formatJson, formatRaw } from '../auth/token-report.js';
import { UnavailableError, UsageError } from '../errors.js';
import { createDispatcher } from '../fetch/dispatcher.js';
import { DEFAULT_RETRY_POLICY, HttpClient } from '../fetch/http-client.js';
import { createLogger, useColor } from '../log/logger.js';
import { createRedactor } from '../redact.js';
import type { CommandContext } from './context.js';
import { envValue, resolveClientSecret } from './settings.js';

interface TokenOptions {
  authUrl?: string;
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  scope?: string;
  broker?: string;
  app?: string;
  raw?: boolean;
  json?: boolean;
  timeout: number;
  retries: number;
  verbose?: boolean;
}

type Target =
  | { kind: 'auth-server'; authUrl: string; clientId: string; clientSecret: string; scope?: string }
  | { kind: 'broker'; brokerUrl: string; applicationPackage: string };

const DEFAULT_TIMEOUT_SECONDS = 30;

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

function parseSeconds(value: string): number {
  const seconds = Number(value);
  // Counted in whole milliseconds (timers take no fractions): below 0.0005 s it would be no timeout at all.
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(Math.round(seconds * 1000) >= 1) || seconds > 3600) {
    throw new UsageError(`--timeout must be a number of seconds from 0.001 to 3600 (got ${JSON.stringify(value)})`);
  }
  return seconds;
}

function parseRetries(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) > 10) {
    throw new UsageError(`--retries must be an integer from 0 to 10 (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

async function resolveTarget(options: TokenOptions, env: NodeJS.ProcessEnv): Promise<{ target: Target; secretSource?: string }> {
  if (options.raw && options.json) throw new UsageError('--raw and --json cannot be used together');
  if (options.app !== undefined && options.broker === undefined) throw new UsageError('--app needs --broker');

  if (options.broker !== undefined) {
    // Explicit client-credential flags with --broker mean a confused command line; env vars are ignored silently
    // because a shell set up for the import commands has them.
    const stray = (['authUrl', 'clientId', 'clientSecret', 'clientSecretFile', 'scope'] as const).find(
      (key) => options[key] !== undefined,
    );
    if (stray) {
      const flag = `--${stray.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
      throw new UsageError(`${flag} cannot be used with --broker (the broker holds the credentials)`);
    }
    if (options.app === undefined || options.app.trim() === '') {
      throw new UsageError('--broker needs --app <application_package>');
    }
    return { target: { kind: 'broker', brokerUrl: options.broker, applicationPackage: options.app } };
  }

  const authUrl = options.authUrl ?? envValue(env, 'AREA_METRICS_AUTH_URL');
  if (authUrl === undefined) throw new UsageError('missing auth URL: pass --auth-url or set AREA_METRICS_AUTH_URL');
  const clientId = options.clientId ?? envValue(env, 'AREA_METRICS_CLIENT_ID');
  if (clientId === undefined) throw new UsageError('missing client id: pass --client-id or set AREA_METRICS_CLIENT_ID');

  const { secret: clientSecret, source } = await resolveClientSecret(options, env);
  return {
    target: { kind: 'auth-server', authUrl, clientId, clientSecret, ...(options.scope ? { scope: options.scope } : {}) },
    secretSource: source,
  };
}

async function runToken(options: TokenOptions, context: CommandContext): Promise<void> {
  const { target, secretSource } = await resolveTarget(options, context.env);
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

  const timeoutMs = Math.round(options.timeout * 1000);
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
  program
    .command('token')
    .description(
      'Do the OAuth 2.0 client-credentials exchange (or ask a token broker) and show the token, for debugging',
    )
    .option('--auth-url <url>', 'auth server root; POSTs to {url}/oauth2/token (env AREA_METRICS_AUTH_URL)')
    .option('--client-id <id>', 'OAuth client id (env AREA_METRICS_CLIENT_ID)')
    .option('--client-secret <secret>', 'OAuth client secret (env AREA_METRICS_CLIENT_SECRET)')
    .option(
      '--client-secret-file <path>',
      'read the client secret from a file, trailing newline trimmed (env AREA_METRICS_CLIENT_SECRET_FILE)',
    )
    .option('--scope <scope>', 'scope to request (sent only when given)')
    .option('--broker <client_server_url>', "ask this token broker's /api/gatekeeper-token instead (needs --app)")
    .option('--app <application_package>', 'the application package to ask the broker for')
    .option('--raw', 'print only the token on stdout')
    .option('--json', "print the server's JSON plus decoded header and claims on stdout")
    .addOption(
      new Option('--timeout <seconds>', 'per request timeout').default(DEFAULT_TIMEOUT_SECONDS).argParser(parseSeconds),
    )
    .addOption(new Option('--retries <n>', 'retries on network errors, timeouts and 5xx').default(0).argParser(parseRetries))
    .option('-v, --verbose', 'say where each setting came from and what is sent (never the secret)')
    .addHelpText('after', EXAMPLES)
    .action(async (options: TokenOptions) => {
      await runToken(options, context);
    });
}
