import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { fastify, LogController } from 'fastify';
import type { Logger } from 'pino';
import { messageOf } from '../../errors.js';
import { requestIdOf, TokenAnswers } from './answers.js';
import type { BrokerConfig, ServerSettings } from '../config/config.js';
import { brokerCore } from './core.js';
import { FastPath } from './fast-path.js';
import { HitSummary } from '../log/hit-summary.js';
import { RequestLimits } from './limits.js';
import type { BrokerApp } from './app.js';
import { listen, type RunningBroker } from './listen.js';
import { LiveConfig } from '../config/live-config.js';
import { ErrorSummary, cutForLog } from '../log/log-bounds.js';
import { brokerLogger, type BrokerLogLevel } from '../log/logger.js';
import { problems, malformedUrlAnswer } from './plugins/problems.js';
import { probes } from './plugins/probes.js';
import { requestLog } from './plugins/request-log.js';
import { tokenRoute } from './plugins/token-route.js';
import { DrainState, TokenRequests } from './request-contract.js';
import { readRequestTarget } from './request-target.js';
import { answerRefusedTarget } from './target-refusal.js';
import type { TokenSource } from '../token/token-source.js';

export { TOKEN_PATH } from './request-contract.js';
export type { BrokerLogLevel } from '../log/logger.js';
export { listen, type RunningBroker } from './listen.js';
export type { BrokerApp } from './app.js';

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

/**
 * The HTTP server, with the timeouts a load balancer expects (with its own server fastify does not apply them, and
 * Node's defaults, 5 s keep-alive, would close connections a load balancer still reuses), answering the fast path's
 * requests itself and passing the rest to fastify.
 */
type Listener = (request: IncomingMessage, response: ServerResponse) => void;

function brokerServer(settings: ServerSettings, dispatch: Listener) {
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
    logger.error({ reason: cutForLog(messageOf(error), live.redact) }, 'config not reloaded: the new one is not valid; the old one stays');
    return false;
  }
  for (const warning of next.warnings) logger.warn({ config: true }, warning);
  live.publish(next, 'reloaded (SIGHUP); server, limits, Redis and attestation settings take effect at the next start');
  return true;
}

/** fastify's options: the broker's own HTTP server and logger, one request line, problem+json for a broken URL. */
function fastifyOptions(settings: ServerSettings, logger: Logger, contract: TokenRequests, dispatch: (routing: Listener) => Listener) {
  return {
    serverFactory: (routing: Listener) => brokerServer(settings, dispatch(routing)),
    loggerInstance: logger,
    // One line per request, written by the request-log plugin with the broker's fields, instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (request: IncomingMessage) => requestIdOf(request.headers['x-request-id']),
    routerOptions: { ignoreTrailingSlash: true },
    // Idle connections are closed by listen()'s drain, not at once; a request arriving while closing is answered.
    forceCloseConnections: false,
    return503OnClosing: false,
    frameworkErrors: malformedUrlAnswer(contract),
  };
}

/** The broker as parts: its config, the token core, the request contract, the fast path and fastify's plugins. */
export function buildBrokerApp(config: BrokerConfig, deps: BrokerDeps = {}): BrokerApp {
  const now = deps.now ?? Date.now;
  const live = new LiveConfig(config);
  const logger = brokerLogger(deps.logStream ?? process.stderr, deps.logLevel ?? 'info', live.redact);
  for (const warning of config.warnings) logger.warn({ config: true }, warning);
  const core = brokerCore(config, deps, live, logger, now);
  const { broker, shared, metrics, attestation } = core;
  const drain = new DrainState();
  const limits = new RequestLimits(config.limits, { keyPrefix: config.redisKeyPrefix, ...(shared ? { redis: shared.client } : {}) });
  const answers = new TokenAnswers(live, now);
  const parts = { live, answers, limits, metrics, logger, drain, hits: new HitSummary(now), errors: new ErrorSummary(now) };
  const contract = new TokenRequests({ ...parts, ...(attestation ? { attestation } : {}) });
  const fastPath = deps.fastPath === false ? undefined : new FastPath(contract, broker, live);
  // Every part reads the target as the router does: read once here, before any of them. A throw here would be the
  // server's own uncaught exception: it is a 500 instead.
  const dispatch =
    (routing: Listener): Listener =>
    (request, response) => {
      try {
        const target = readRequestTarget(request.url ?? '/');
        if (typeof target !== 'string') {
          answerRefusedTarget(contract, request, response, target);
          return;
        }
        request.url = target;
        if (fastPath?.answer(request, response) !== true) routing(request, response);
      } catch (error) {
        const answer = contract.unexpected(error, contract.head(undefined, undefined, request.socket.remoteAddress, undefined));
        if (!response.headersSent) response.writeHead(answer.status, answer.headers).end(answer.body);
      }
    };

  const app = fastify(fastifyOptions(config.server, logger, contract, dispatch));
  // No child logger per request (creating one serialises its bindings for every request): lines carry `reqId`.
  app.setChildLoggerFactory((parent) => parent);
  app.register(requestLog, { contract, drain }).register(problems, { contract }).register(tokenRoute, { contract, broker, live });
  app.register(probes, {
    broker,
    shared,
    drain,
    attestation,
    metricsText: config.server.metricsPort === undefined ? () => metrics.text() : undefined,
  });
  const summaries = setInterval(() => contract.logSummaries(), deps.hitSummaryIntervalMs ?? DEFAULT_HIT_SUMMARY_INTERVAL_MS).unref();
  app.addHook('onClose', async () => {
    clearInterval(summaries);
    contract.logSummaries();
    await core.close();
  });

  let closed: Promise<void> | undefined;
  return {
    app,
    listener: dispatch((request, response) => app.routing(request, response)),
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
