import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** The broker, not yet listening. */
export interface BrokerApp {
  readonly app: FastifyInstance<Server, IncomingMessage, ServerResponse, Logger>;
  /**
   * The whole broker as the listener its server calls for each request: the target read once, the fast path, then
   * fastify's routing (once `app.ready()` has resolved). Tests send requests through it without a socket.
   */
  readonly listener: (request: IncomingMessage, response: ServerResponse) => void;
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
