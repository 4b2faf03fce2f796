import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';

/** The broker, not yet listening: `inject` sends a request through it whole (fast path included) without a socket. */
export interface BrokerApp {
  readonly app: FastifyInstance<Server, IncomingMessage, ServerResponse, Logger>;
  inject(options: InjectOptions | string): Promise<LightMyRequestResponse>;
  /** Answers the metrics text (on the main port or on `server.metricsPort`). */
  metricsText(): Promise<{ contentType: string; text: string }>;
  /** From now on /readyz answers 503 and every answer closes its connection. */
  startDraining(): void;
  /** Re-reads the config (SIGHUP): applied when valid, else the old one is kept and an error line says why. */
  reload(): boolean;
  /** Closes the app (and its listener, if any), then timers, watchers, Redis and the auth-server pool. */
  close(): Promise<void>;
  /** Logs one line through the broker's logger (redacted like every line). */
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
}
