import type { Logger } from 'pino';
import type { AttestationGate } from '../attestation/gate.js';
import { openAttestation } from '../attestation/open.js';
import type { RedisTokenCache } from '../token/cache.js';
import type { BrokerConfig } from '../config/config.js';
import type { LiveConfig } from '../config/live-config.js';
import { BrokerMetrics } from './metrics.js';
import { openSharedCache, redisSettingsOf } from '../token/redis-link.js';
import { SecretWatcher } from '../config/secret-watcher.js';
import { TokenBroker } from '../token/token-broker.js';
import { AuthServerTokenSource, type TokenSource } from '../token/token-source.js';

/** What the core takes besides the config (a subset of BrokerDeps). */
export interface CoreDeps {
  readonly redisUrl?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly tokenSource?: TokenSource;
  readonly lockPollMs?: number;
  readonly redisProbeIntervalMs?: number;
}

/** The parts behind the HTTP layer, and how to close them. */
export interface BrokerCore {
  readonly broker: TokenBroker;
  readonly shared: RedisTokenCache | undefined;
  readonly metrics: BrokerMetrics;
  readonly attestation: AttestationGate | undefined;
  close(): Promise<void>;
}

/**
 * The token core and what it stands on: the shared cache (Redis, connecting in the background), the auth-server
 * client, the secret watcher, the attestation gate, the metrics. The config it follows is `live`'s.
 */
export function brokerCore(config: BrokerConfig, deps: CoreDeps, live: LiveConfig, logger: Logger, now: () => number): BrokerCore {
  const shared = openSharedCache(redisSettingsOf(config, deps.redisUrl), config.redisKeyPrefix, logger, deps.redisProbeIntervalMs);
  const source = deps.tokenSource ?? new AuthServerTokenSource({ timeoutMs: config.authTimeoutMs, env: deps.env ?? {}, now });
  const metrics = new BrokerMetrics();
  const watcher = new SecretWatcher(live, (message, fields) => logger.warn(fields, message));
  const broker = new TokenBroker({
    config,
    source,
    now,
    ...(shared ? { shared } : {}),
    ...(deps.lockPollMs !== undefined ? { lockPollMs: deps.lockPollMs } : {}),
    events: {
      warn: (message, fields) => logger.warn(fields ?? {}, message),
      info: (message, fields) => logger.info(fields ?? {}, message),
      authCall: (outcome, seconds) => metrics.authCall(outcome, seconds),
    },
    rereadSecret: (platform) => watcher.rereadPlatform(platform),
  });
  live.onChange((next, why) => {
    broker.setConfig(next);
    logger.info({ platforms: [...next.platforms.keys()], applications: next.applications.size }, `config applied: ${why}`);
  });
  const redisUp = (): boolean => shared?.status() === 'up';
  metrics.watch({
    backoffStates: () => broker.backoffStates(),
    platformStates: () => broker.platformStates(),
    ...(shared ? { redisUp } : {}),
  });
  const attestation = openAttestation(config.attestation, {
    now,
    logger,
    env: deps.env ?? {},
    appIdOf: (application) => live.current.appIds.get(application),
    ...(shared
      ? {
          redis: {
            client: shared.client,
            keyPrefix: config.redisKeyPrefix,
            up: redisUp,
            whenUp: (listener: () => void) => shared.onUp(listener),
          },
        }
      : {}),
  });
  if (attestation !== undefined) metrics.countAttestation();
  return {
    broker,
    shared,
    metrics,
    attestation,
    close: async () => {
      watcher.close();
      await attestation?.close();
      await shared?.close();
      await source.close();
    },
  };
}
