import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { AttestationGate } from './gate.js';
import { AttestationKeys } from './keys.js';
import { MemoryReplayGuard, SharedReplayGuard, type ReplayGuard } from './replay.js';
import type { AttestationSettings } from '../config/attestation-settings.js';
import { AttestationVerifier } from './verifier.js';

export interface AttestationParts {
  readonly now: () => number;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** application package → its app id (read at each check: a reload may change them). */
  readonly appIdOf: (application: string) => string | undefined;
  /** The shared Redis, for single-use ids across instances. */
  readonly redis?: {
    readonly client: Redis;
    readonly keyPrefix: string;
    readonly up: () => boolean;
    readonly whenUp: (listener: () => void) => void;
  };
}

/** The attestation gate of a config, its keys' first fetch started; undefined when attestation is off. */
export function openAttestation(settings: AttestationSettings | undefined, parts: AttestationParts): AttestationGate | undefined {
  if (settings === undefined) return undefined;
  const { now, logger, redis } = parts;
  const keys = new AttestationKeys({
    jwksUrl: settings.jwksUrl,
    now,
    env: parts.env,
    log: (level, message, fields) => logger[level](fields, message),
  });
  keys.start();
  const replay: ReplayGuard =
    redis === undefined
      ? new MemoryReplayGuard(now)
      : new SharedReplayGuard({ redis: redis.client, keyPrefix: redis.keyPrefix, redisUp: redis.up, whenRedisUp: redis.whenUp, now });
  return new AttestationGate(settings, new AttestationVerifier(settings, keys, now), keys, replay, parts.appIdOf, now);
}
