import { UsageError } from '../errors.js';
import type { BROKER_OPTIONS } from './broker-options.js';
import type { CommandAction } from './declaration.js';

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export const brokerAction: CommandAction<typeof BROKER_OPTIONS> = async ({ context, options, given }) => {
  if (options.config === undefined) throw new UsageError('missing --config <file> (or AREA_METRICS_BROKER_CONFIG)');
  const configPath = options.config;
  const redisUrl = options.redisUrl;

  // Loaded on demand: fastify and ioredis are not needed by the import commands, which cron starts every night.
  const { redisUrlProblem } = await import('../broker/config/config-schema.js');
  const redisProblem = redisUrl === undefined ? undefined : redisUrlProblem(redisUrl);
  if (redisProblem !== undefined) {
    throw new UsageError(`${given('redisUrl') === 'flag' ? '--redis-url' : 'AREA_METRICS_REDIS_URL'} ${redisProblem}`);
  }
  const [{ loadBrokerConfig }, { startBroker }] = await Promise.all([
    import('../broker/config/config.js'),
    import('../broker/http/server.js'),
  ]);
  const config = loadBrokerConfig(configPath, { env: context.env });
  if (context.signal.aborted) return;
  const broker = await startBroker(config, {
    host: options.host,
    port: options.port,
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
};
