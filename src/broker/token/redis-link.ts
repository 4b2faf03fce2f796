import type { Logger } from 'pino';
import type { BrokerConfig, RedisSettings } from '../config/config.js';
import { RedisTokenCache } from './cache.js';

/** Where Redis is, for the logs: no password. */
export function redisLocation(redis: RedisSettings): string {
  if (redis.sentinels !== undefined)
    return `sentinel ${redis.name ?? ''} via ${redis.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`;
  try {
    const parsed = new URL(redis.url ?? '');
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'redis';
  }
}

/** The configured Redis; `--redis-url` replaces where it is, not how to reach it (password, TLS files). */
export function redisSettingsOf(config: BrokerConfig, redisUrl: string | undefined): RedisSettings | undefined {
  if (redisUrl === undefined) return config.redis;
  const password = config.redis?.password;
  const tls = config.redis?.tls;
  return { url: redisUrl, ...(password !== undefined ? { password } : {}), ...(tls !== undefined ? { tls } : {}) };
}

/**
 * The shared token cache on the configured Redis, connecting in the background (a Redis that hangs must not delay
 * start-up: the broker serves from memory until it answers), its state changes logged. Undefined without Redis.
 */
export function openSharedCache(
  redis: RedisSettings | undefined,
  keyPrefix: string,
  logger: Logger,
  probeIntervalMs?: number,
): RedisTokenCache | undefined {
  if (redis === undefined) return undefined;
  const where = redisLocation(redis);
  const shared = new RedisTokenCache({
    redis,
    keyPrefix,
    ...(probeIntervalMs !== undefined ? { probeIntervalMs } : {}),
    onWarning: (message) => logger.warn({ redisAt: where }, message),
    onStatusChange: (status, reason) => {
      if (status === 'up')
        logger.info({ redis: 'up', redisAt: where }, 'Redis connected and taking commands; tokens are shared with other instances');
      else
        logger.warn(
          { redis: 'down', redisAt: where, reason },
          "Redis unavailable; serving tokens from this instance's memory and the auth server",
        );
    },
  });
  shared.connect();
  return shared;
}
