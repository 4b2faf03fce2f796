import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { fastify, LogController, type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { messageOf } from '../errors.js';
import { requestIdOf, TokenAnswers } from './answers.js';
import { openAttestation } from './attestation/open.js';
import type { BrokerConfig, ServerSettings } from './config.js';
import { FastPath } from './fast-path.js';
import { HitSummary } from './hit-summary.js';
import { RequestLimits } from './limits.js';
import { listen, type RunningBroker } from './listen.js';
import { LiveConfig } from './live-config.js';
import { ErrorSummary, cutForLog } from './log-bounds.js';
import { brokerLogger, type BrokerLogLevel } from './logger.js';
import { BrokerMetrics } from './metrics.js';
import { problems, malformedUrlAnswer } from './plugins/problems.js';
import { probes } from './plugins/probes.js';
import { requestLog } from './plugins/request-log.js';
import { tokenRoute } from './plugins/token-route.js';
import { openSharedCache, redisSettingsOf } from './redis-link.js';
import { DrainState, TokenRequests } from './request-contract.js';
import { SecretWatcher } from './secret-watcher.js';
import { TokenBroker } from './token-broker.js';
import { AuthServerTokenSource, type TokenSource } from './token-source.js';

export { TOKEN_PATH } from './request-contract.js';
export type { BrokerLogLevel } from './logger.js';
export { listen, type RunningBroker } from './listen.js';

export const DEFAULT_HIT_SUMMARY_INTERVAL_MS = 60_000;

/** What the broker needs besides its config; every field has a default fit for production. */
export interface BrokerDeps {
  /** Overrides the config's Redis URL (`--redis-url`). */
  readonly redisUrl?: string;
  /** Where the JSON log lines go; default process.stderr (written asynchronously, see brokerLogger). */
  readonly logStream?: Writable;
  readonly logLevel?: BrokerLogLevel;
  /** Where the auth-server client reads the proxy variables (the command passes its env); default none. */
  readonly env?: NodeJS.ProcessEnv;
  /** Replaces the auth-server client (tests). */
  readonly tokenSource?: TokenSource;
  /** How often the `cache hits` and `errors` summary lines are logged (when there was something); default 60 s. */
  readonly hitSummaryIntervalMs?: number;
  /** How often an instance that lost the cross-instance refresh lock looks for the winner's token (tests). */
  readonly lockPollMs?: number;
  /** How often Redis is probed with a write (tests). */
  readonly redisProbeIntervalMs?: number;
  /** Reads the config again (SIGHUP); without it a reload keeps the config as it is. */
  readonly reloadConfig?: () => BrokerConfig;
  /** The clock of token lifetimes and log windows, epoch ms (tests move it instead of waiting); default Date.now. */
  readonly now?: () => number;
  /** false answers every request through fastify (the contract test compares both paths); default true. */
  readonly fastPath?: boolean;
}

/** Kept for the callers that start a broker in one call: the deps plus where to listen. */
export interface StartBrokerOptions extends BrokerDeps {
  /** Default 127.0.0.1 (put a load balancer or reverse proxy in front; use 0.0.0.0 in a container). */
  readonly host?: string;
  /** Default 8080; 0 picks a free port (see the returned url). */
  readonly port?: number;
}

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

/**
 * The HTTP server, with the timeouts a load balancer expects (with its own server fastify does not apply them, and
 * Node's defaults, 5 s keep-alive, would close connections a load balancer still reuses), answering the fast path's
 * requests itself and passing the rest to fastify.
 */
function brokerServer(settings: ServerSettings, dispatch: (request: IncomingMessage, response: ServerResponse) => void) {
  return createServer(
    {
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // How often Node checks the two timeouts above: by default every 30 s, which let a slow client hold a
      // connection for half a minute past them.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4))),
    },
    dispatch,
  );
}

/** Re-reads the config (SIGHUP) into `live`; a config that is not valid leaves the current one with an error line. */
function reloadInto(live: LiveConfig, read: (() => BrokerConfig) | undefined, logger: Logger): boolean {
  if (read === undefined) return false;
  let next: BrokerConfig;
  try {
    next = read();
  } catch (error) {
    logger.error({ reason: cutForLog(messageOf(error)) }, 'config not reloaded: the new one is not valid; the old one stays');
    return false;
  }
  for (const warning of next.warnings) logger.warn({ config: true }, warning);
  live.publish(next, 'reloaded (SIGHUP); server, limits and Redis settings take effect at the next start');
  return true;
}

/** The broker as parts: its config, the token core, the request contract, the fast path and fastify's plugins. */
export function buildBrokerApp(config: BrokerConfig, deps: BrokerDeps = {}): BrokerApp {
  const now = deps.now ?? Date.now;
  const live = new LiveConfig(config);
  const logger = brokerLogger(deps.logStream ?? process.stderr, deps.logLevel ?? 'info', live.redact);
  for (const warning of config.warnings) logger.warn({ config: true }, warning);
  const shared = openSharedCache(redisSettingsOf(config, deps.redisUrl), config.redisKeyPrefix, logger, deps.redisProbeIntervalMs);
  const source = deps.tokenSource ?? new AuthServerTokenSource({ timeoutMs: config.authTimeoutMs, env: deps.env ?? {}, now });
  const metrics = new BrokerMetrics();
  const watcher = new SecretWatcher(live, (message, fields) => logger.warn(fields, message));
  const broker = new TokenBroker({
    config, source, now, ...(shared ? { shared } : {}), ...(deps.lockPollMs !== undefined ? { lockPollMs: deps.lockPollMs } : {}),
    events: { warn: (message, fields) => logger.warn(fields ?? {}, message), info: (message, fields) => logger.info(fields ?? {}, message), authCall: (outcome, seconds) => metrics.authCall(outcome, seconds) },
    rereadSecret: (platform) => watcher.rereadPlatform(platform),
  });
  live.onChange((next, why) => {
    broker.setConfig(next);
    logger.info({ platforms: [...next.platforms.keys()], applications: next.applications.size }, `config applied: ${why}`);
  });
  metrics.watch({ backoffStates: () => broker.backoffStates(), platformStates: () => broker.platformStates(), ...(shared ? { redisUp: () => shared.status() === 'up' } : {}) });
  const drain = new DrainState();
  const limits = new RequestLimits(config.limits, { keyPrefix: config.redisKeyPrefix, ...(shared ? { redis: shared.client } : {}) });
  const attestation = openAttestation(config.attestation, {
    now, logger, env: deps.env ?? {}, appIdOf: (application) => live.current.appIds.get(application),
    ...(shared ? { redis: { client: shared.client, keyPrefix: config.redisKeyPrefix, up: () => shared.status() === 'up' } } : {}),
  });
  if (attestation !== undefined) metrics.countAttestation();
  const contract = new TokenRequests({
    live, answers: new TokenAnswers(live, now), limits, metrics, logger, drain, hits: new HitSummary(now), errors: new ErrorSummary(now), ...(attestation ? { attestation } : {}),
  });
  const fastPath = deps.fastPath === false ? undefined : new FastPath(contract, broker, live);
  const dispatch = (routing: (request: IncomingMessage, response: ServerResponse) => void) => (request: IncomingMessage, response: ServerResponse) => {
    if (fastPath?.answer(request, response) !== true) routing(request, response);
  };

  const app = fastify({
    serverFactory: (routing) => brokerServer(config.server, dispatch(routing)),
    loggerInstance: logger,
    // One line per request, written by the request-log plugin with the broker's fields, instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    routerOptions: { ignoreTrailingSlash: true },
    // Idle connections are closed by listen()'s drain, not at once; a request arriving while closing is answered.
    forceCloseConnections: false,
    return503OnClosing: false,
    frameworkErrors: malformedUrlAnswer(contract),
  });
  // No child logger per request (creating one serialises its bindings for every request): lines carry `reqId`.
  app.setChildLoggerFactory((parent) => parent);
  app.register(requestLog, { contract, drain }).register(problems, { contract }).register(tokenRoute, { contract, broker, live });
  app.register(probes, { broker, shared, drain, attestation, metricsText: config.server.metricsPort === undefined ? () => metrics.text() : undefined });

  const summaries = setInterval(() => contract.logSummaries(), deps.hitSummaryIntervalMs ?? DEFAULT_HIT_SUMMARY_INTERVAL_MS).unref();
  app.addHook('onClose', async () => {
    clearInterval(summaries);
    watcher.close();
    contract.logSummaries();
    await attestation?.close();
    await shared?.close();
    await source.close();
  });
  let closed: Promise<void> | undefined;
  const injectInto = dispatch((request, response) => app.routing(request, response));
  return {
    app,
    inject: async (options) => {
      await app.ready();
      const { inject } = await import('light-my-request');
      return inject(injectInto, options);
    },
    metricsText: () => metrics.text(),
    startDraining: () => drain.start(),
    reload: () => reloadInto(live, deps.reloadConfig, logger),
    close: () => (closed ??= app.close()),
    log: (level, message, fields) => logger[level](fields ?? {}, message),
  };
}

/** Builds the broker and listens: the one call of the command, the tests and the benchmark. */
export async function startBroker(config: BrokerConfig, options: StartBrokerOptions = {}): Promise<RunningBroker> {
  const { host, port, ...deps } = options;
  const built = buildBrokerApp(config, deps);
  return listen(built, config, { ...(host !== undefined ? { host } : {}), ...(port !== undefined ? { port } : {}) });
}
