import { createRedactor, type Credential, type Redactor } from '../../redact.js';
import type { BrokerConfig } from './config.js';

/** Told of every config that replaces the current one, and why (a reload, a rotated secret file). */
export type ConfigListener = (next: BrokerConfig, why: string) => void;

function credentialsOf(config: BrokerConfig): Credential[] {
  const credentials: Credential[] = [];
  for (const platform of config.platforms.values()) {
    if (platform.clientSecret !== undefined) {
      credentials.push({ ...(platform.clientId !== undefined ? { clientId: platform.clientId } : {}), secret: platform.clientSecret });
    }
  }
  if (config.redis?.password !== undefined) credentials.push({ secret: config.redis.password });
  return credentials;
}

/**
 * The broker's config as it is now, and the redactor of every secret it ever held. A SIGHUP reload and a rotated
 * secret file publish their config here; the parts that keep something derived from it (the token broker, the fast
 * path's application names, the secret watcher) listen.
 */
export class LiveConfig {
  private config: BrokerConfig;
  private redactor: Redactor;
  // Secrets that were ever configured stay redacted after a rotation: old log readers and old errors may hold them.
  private readonly knownCredentials: Credential[];
  private readonly listeners: ConfigListener[] = [];

  constructor(initial: BrokerConfig) {
    this.config = initial;
    this.knownCredentials = credentialsOf(initial);
    this.redactor = createRedactor(this.knownCredentials);
  }

  get current(): BrokerConfig {
    return this.config;
  }

  /** Replaces every spelling of every secret ever configured (a stable function: loggers keep it). */
  readonly redact: Redactor = (text) => this.redactor(text);

  onChange(listener: ConfigListener): void {
    this.listeners.push(listener);
  }

  /** A new config in place of the current one: credentials, applications and CORS take effect at once. */
  publish(next: BrokerConfig, why: string): void {
    for (const credential of credentialsOf(next)) {
      const known = this.knownCredentials.some((held) => held.secret === credential.secret && held.clientId === credential.clientId);
      if (!known) this.knownCredentials.push(credential);
    }
    this.redactor = createRedactor(this.knownCredentials);
    this.config = next;
    for (const listener of this.listeners) listener(next, why);
  }
}
