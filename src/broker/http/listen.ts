import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { errnoCode, UsageError, messageOf } from '../../errors.js';
import type { BrokerConfig } from '../config/config.js';
import { pathOf } from './request-contract.js';
import type { BrokerApp } from './app.js';

/**
 * After the drain delay, how long the listener stays open before it closes: a request already on its way on an idle
 * keep-alive connection arrives and is answered (with `Connection: close`) instead of being cut off with it.
 */
const IDLE_CLOSE_GRACE_MS = 500;

export interface RunningBroker {
  /** e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Where /metrics is served when `server.metricsPort` is set. */
  readonly metricsUrl?: string;
  /**
   * Drains and stops: /readyz answers 503 and answers close their connections for `server.shutdownDelaySeconds`, then
   * the listener closes, in-flight requests finish, and what remains after `server.shutdownTimeoutSeconds` is
   * destroyed. Then Redis and the auth-server pool are closed.
   */
  close(): Promise<void>;
  /** Re-reads the config (SIGHUP). */
  reload(): boolean;
}

function urlOf(address: string | AddressInfo | null, host: string): string {
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A plain server answering GET /metrics only, for `server.metricsPort`. */
async function listenForMetrics(built: BrokerApp, host: string, port: number): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || pathOf(request.url ?? '') !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics here\n');
      return;
    }
    built.metricsText().then(
      ({ contentType, text }) => response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

async function closeServer(server: Server): Promise<void> {
  const stopping = new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  await stopping;
}

/** The drain, then the stop, of a listening broker (see RunningBroker.close). */
async function drainAndStop(built: BrokerApp, config: BrokerConfig, metricsServer: Server | undefined): Promise<void> {
  const settings = config.server;
  built.startDraining();
  built.log('info', 'broker draining: /readyz answers 503, tokens are still served', {
    shutdownDelaySeconds: settings.shutdownDelayMs / 1000,
  });
  if (settings.shutdownDelayMs > 0) await delay(settings.shutdownDelayMs);
  built.log('info', 'broker stopping: listener closed, finishing in-flight requests', {
    shutdownTimeoutSeconds: settings.shutdownTimeoutMs / 1000,
  });
  // Node stops enforcing its header and request timeouts once the listener closes: a slow client would hold the
  // process open. Whatever has not finished by the shutdown timeout is destroyed.
  const server = built.app.server;
  const forced = setTimeout(() => {
    built.log('warn', 'shutdown timeout: destroying the connections still open');
    server.closeAllConnections();
  }, settings.shutdownTimeoutMs);
  try {
    await delay(Math.min(IDLE_CLOSE_GRACE_MS, settings.shutdownTimeoutMs / 2));
    await built.close();
  } finally {
    clearTimeout(forced);
  }
  if (metricsServer !== undefined) await closeServer(metricsServer);
  built.log('info', 'broker stopped');
}

/** Listens on host:port (and on `server.metricsPort` for /metrics), and returns the handle that drains and stops it. */
export async function listen(built: BrokerApp, config: BrokerConfig, where: { host?: string; port?: number } = {}): Promise<RunningBroker> {
  const host = where.host ?? '127.0.0.1';
  const port = where.port ?? 8080;
  const metricsPort = config.server.metricsPort;
  let url: string;
  let metricsServer: Server | undefined;
  try {
    url = await built.app.listen({ host, port });
  } catch (error) {
    await built.close();
    throw listenError(host, port, error);
  }
  if (metricsPort !== undefined) {
    try {
      metricsServer = await listenForMetrics(built, host, metricsPort);
    } catch (error) {
      await built.close();
      throw listenError(host, metricsPort, error);
    }
  }
  const metricsUrl = metricsServer === undefined ? undefined : urlOf(metricsServer.address(), host);
  built.log('info', 'broker listening', {
    url,
    ...(metricsUrl !== undefined ? { metricsUrl } : {}),
    applications: config.applications.size,
    platforms: [...config.platforms.keys()],
    cache: config.redis !== undefined ? 'redis' : 'memory',
    marginSeconds: config.marginSeconds,
    attestation: attestationMode(config),
  });
  let closed: Promise<void> | undefined;
  return {
    url,
    ...(metricsUrl !== undefined ? { metricsUrl } : {}),
    reload: () => built.reload(),
    close: () => (closed ??= drainAndStop(built, config, metricsServer)),
  };
}

/** The attestation mode as the listening line gives it: `off`, or e.g. `enforce (firebase-app-check, single use)`. */
function attestationMode(config: BrokerConfig): string {
  const settings = config.attestation;
  if (settings === undefined) return 'off';
  return `${settings.mode} (${settings.provider}${settings.singleUse ? ', single use' : ''})`;
}

function listenError(host: string, port: number, error: unknown): UsageError {
  return new UsageError(`cannot listen on ${host}:${port}: ${errnoCode(error) ?? messageOf(error)}`);
}
