import { Option, type Command } from 'commander';
import type { BrokerLogLevel } from '../broker/server.js';
import { UsageError } from '../errors.js';
import type { CommandContext } from './context.js';
import { envValue } from './settings.js';

interface BrokerCommandOptions {
  config?: string;
  host?: string;
  port?: string;
  redisUrl?: string;
  logLevel: BrokerLogLevel;
}

function parsePort(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`${what} must be a port number 0..65535 (got ${JSON.stringify(value)})`);
  return Number(value);
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export function registerBrokerCommand(program: Command, context: CommandContext): void {
  program
    .command('broker')
    .description('Run the token broker: GET /api/gatekeeper-token?application_package=X answers a cached JWT for app X')
    .option('--config <file>', 'broker config JSON (env AREA_METRICS_BROKER_CONFIG)')
    .option('--host <host>', 'address to listen on (env AREA_METRICS_BROKER_HOST; default 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 = any free port (env AREA_METRICS_BROKER_PORT; default 8080)')
    .option('--redis-url <url>', 'Redis as the shared cache of several instances (env AREA_METRICS_REDIS_URL; overrides cache.redisUrl)')
    .addOption(
      new Option('--log-level <level>', 'lowest level of the JSON log lines on stderr')
        .choices(['debug', 'info', 'warn', 'error', 'silent'])
        .default('info'),
    )
    .addHelpText(
      'after',
      `
Examples:
  ANDROID_SECRET=... IOS_SECRET=... area-metrics broker --config broker.json
  area-metrics broker --config broker.json --host 0.0.0.0 --port 8080 --redis-url redis://redis:6379/0
  curl 'http://127.0.0.1:8080/api/gatekeeper-token?application_package=com.acme.shop'

Config (secrets come from env vars or files, not from the config text):
  {"authUrl": "https://auth.example.com",
   "platforms": {"android": {"clientId": "...", "clientSecretEnv": "ANDROID_SECRET"},
                 "web": {"clientId": "...", "clientSecretFile": "/run/secrets/web"}},
   "applications": {"com.acme.shop": "android", "shop.acme.example": "web"},
   "cache": {"marginSeconds": 60}}

Endpoints: GET /api/gatekeeper-token, GET /healthz, GET /readyz, GET /metrics (or on server.metricsPort).
SIGTERM/SIGINT: /readyz answers 503 for server.shutdownDelaySeconds while tokens are still served, then stop
accepting connections, finish in-flight requests (at most server.shutdownTimeoutSeconds), exit 0; a second
signal exits at once. SIGHUP: read the config again (kept as it was if the new one is not valid).
Exit codes: 0 stopped by a signal; 2 invalid config or options (the message names the field), or the port
cannot be bound.
Logs: one JSON object per line on stderr (request id, application, cache hit/miss, auth latency; no secrets).`,
    )
    .action(async (options: BrokerCommandOptions) => {
      const configPath = options.config ?? envValue(context.env, 'AREA_METRICS_BROKER_CONFIG');
      if (configPath === undefined) throw new UsageError('missing --config <file> (or AREA_METRICS_BROKER_CONFIG)');
      const host = options.host ?? envValue(context.env, 'AREA_METRICS_BROKER_HOST') ?? '127.0.0.1';
      const portText = options.port ?? envValue(context.env, 'AREA_METRICS_BROKER_PORT') ?? '8080';
      const port = parsePort(portText, options.port !== undefined ? '--port' : 'AREA_METRICS_BROKER_PORT');
      const redisUrl = options.redisUrl ?? envValue(context.env, 'AREA_METRICS_REDIS_URL');

      // Loaded on demand: fastify and ioredis are not needed by the import commands, which cron starts every night.
      const { loadBrokerConfig, redisUrlProblem } = await import('../broker/config.js');
      const redisProblem = redisUrl === undefined ? undefined : redisUrlProblem(redisUrl);
      if (redisProblem !== undefined) {
        throw new UsageError(`${options.redisUrl !== undefined ? '--redis-url' : 'AREA_METRICS_REDIS_URL'} ${redisProblem}`);
      }
      const { startBroker } = await import('../broker/server.js');
      const config = loadBrokerConfig(configPath, { env: context.env });
      if (context.signal.aborted) return;
      const broker = await startBroker(config, {
        host,
        port,
        ...(redisUrl !== undefined ? { redisUrl } : {}),
        env: context.env,
        logStream: context.stderr,
        logLevel: options.logLevel,
        reloadConfig: () => loadBrokerConfig(configPath, { env: context.env }),
      });
      const stopReloading = context.onReloadSignal?.(() => broker.reload());
      // One plain line on stdout, so scripts (and `--port 0`) learn where it listens; the logs are on stderr.
      context.stdout.write(`broker listening on ${broker.url}\n`);
      try {
        await untilAborted(context.signal);
      } finally {
        stopReloading?.();
      }
      await broker.close();
    });
}
