import { watch, type FSWatcher } from 'node:fs';
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { fastify, LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type onSendHookHandler } from 'fastify';
import { pino } from 'pino';
import { errnoCode, UsageError, messageOf } from '../errors.js';
import { createRedactor, type Credential, type Redactor } from '../redact.js';
import { TokenAnswers, requestIdOf, type Answer, type AnswerContext } from './answers.js';
import { RedisTokenCache, type SharedTokenCache } from './cache.js';
import { withSecretReread, type BrokerConfig, type RedisSettings } from './config.js';
import { allowedOrigin, corsHeaders } from './cors.js';
import { HitSummary } from './hit-summary.js';
import { RequestLimits } from './limits.js';
import { ErrorSummary, clientAddress, cutForLog } from './log-bounds.js';
import { BrokerMetrics } from './metrics.js';
import { BrokerProblem, type ProblemDetails } from './problem.js';
import { TokenBroker, parseApplicationPackage, type BrokerToken, type CacheOutcome } from './token-broker.js';
import { AuthServerTokenSource, type TokenSource } from './token-source.js';

export const TOKEN_PATH = '/api/gatekeeper-token';

export const DEFAULT_HIT_SUMMARY_INTERVAL_MS = 60_000;

/** After the listener closes, how long idle connections are left for a request already on its way. */
const IDLE_CLOSE_GRACE_MS = 500;

export type BrokerLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** What the broker needs besides its config; every field has a default fit for production. */
export interface BrokerDeps {
  /** Overrides the config's Redis URL (`--redis-url`). */
  readonly redisUrl?: string;
  /**
   * Where the JSON log lines go; default process.stderr. A stream backed by a file descriptor (process.stderr) is
   * written asynchronously through pino's buffered destination, so logging never blocks a response.
   */
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
}

/** Kept for the callers that start a broker in one call: the deps plus where to listen. */
export interface StartBrokerOptions extends BrokerDeps {
  /** Default 127.0.0.1 (put a load balancer or reverse proxy in front; use 0.0.0.0 in a container). */
  readonly host?: string;
  /** Default 8080; 0 picks a free port (see the returned url). */
  readonly port?: number;
}

/** The broker as a fastify app, not yet listening: `app.inject` tests it without a socket. */
export interface BrokerApp {
  readonly app: FastifyInstance;
  /** Answers the metrics text (on the main port or on `server.metricsPort`). */
  metricsText(): Promise<{ contentType: string; text: string }>;
  /** From now on /readyz answers 503 and every answer closes its connection. */
  startDraining(): void;
  /** Re-reads the config (SIGHUP): applied when valid, else the old one is kept and an error line says why. */
  reload(): boolean;
  /** Stops timers and watchers, closes Redis and the auth-server pool (after the listener closed). */
  dispose(): Promise<void>;
  /** Logs one line through the broker's logger (redacted like every line). */
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
}

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

/** What the token route adds to its `request completed` line. */
interface TokenRequestLog {
  application?: string;
  cache?: CacheOutcome;
  authLatencyMs?: number;
  problem?: string;
  reason?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the token route (a per-request decoration: cheaper than a WeakMap lookup). */
    tokenLog: TokenRequestLog | null;
    /** Set by /healthz, /readyz and /metrics, whose `request completed` line is debug, not info. */
    probe: boolean;
  }
}

/** pino's `time` field, formatted once per millisecond rather than once per line (many lines share one). */
function isoTimestamp(): () => string {
  let lastMs = -1;
  let lastField = '';
  return () => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastField = `,"time":"${new Date(now).toISOString()}"`;
    }
    return lastField;
  };
}

/** Whether a request is for the token resource (with or without a trailing slash, whatever the query). */
function isTokenPath(url: string): boolean {
  const path = pathOf(url);
  return path === TOKEN_PATH || path === `${TOKEN_PATH}/`;
}

// JSON allows U+2028 and U+2029 raw inside strings, but many line readers split on them: a log line stays one line.
const LINE_SEPARATORS = /[\u2028\u2029]/g;

/**
 * The last step before a log line is written: every spelling of every configured secret is replaced, whatever level
 * or path produced the line, and the line separators are escaped.
 */
function logLineFilter(redact: () => Redactor): (line: string) => string {
  return (line) => {
    const clean = redact()(line);
    return clean.includes('\u2028') || clean.includes('\u2029')
      ? clean.replace(LINE_SEPARATORS, (separator) => (separator === '\u2028' ? '\\u2028' : '\\u2029'))
      : clean;
  };
}

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

/** A request URL without its query string (the query can be long, and only the path identifies the resource). */
function pathOf(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

/** A repeated request header: the fast path leaves such a request to fastify, which merges headers the usual way. */
const REPEATED = Symbol('repeated header');

/** A request header by its lower-case name from the raw [name, value, ...] list: its value, undefined, or REPEATED. */
function rawHeader(rawHeaders: readonly string[], lowerCaseName: string): string | undefined | typeof REPEATED {
  let found: string | undefined;
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as string;
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) {
      if (found !== undefined) return REPEATED;
      found = rawHeaders[index + 1];
    }
  }
  return found;
}

/** Where Redis is, for the logs: no password. */
function redisLocation(redis: RedisSettings): string {
  if (redis.sentinels !== undefined) return `sentinel ${redis.name ?? ''} via ${redis.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`;
  try {
    const parsed = new URL(redis.url ?? '');
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'redis';
  }
}

function writeAnswer(response: ServerResponse, answer: Answer): void {
  response.writeHead(answer.status, answer.headers).end(answer.body);
}

function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/**
 * The broker as a fastify app (routing, request ids, pino JSON logging with redaction, graceful close), plus the one
 * answer that comes before fastify: a fresh token in memory for a plain token request (see `fastPath`). The HTTP
 * server is built here too, with the timeouts a load balancer expects, since the fast path needs the server's own
 * request handler.
 */
export function buildBrokerApp(initialConfig: BrokerConfig, deps: BrokerDeps = {}): BrokerApp {
  let config = initialConfig;
  // Secrets that were ever configured stay redacted after a rotation: old log readers and old errors may hold them.
  const knownCredentials = credentialsOf(config);
  let redact = createRedactor(knownCredentials);
  const answers = new TokenAnswers(
    () => config,
    () => redact,
  );
  const logStream = deps.logStream ?? process.stderr;
  const fd = (logStream as { fd?: unknown }).fd;
  // One synchronous write(2) per request was a fifth of the broker's CPU under load; an fd gets an async destination,
  // which pino flushes synchronously when the process exits (so a second signal loses no line).
  const logDestination = typeof fd === 'number' ? pino.destination({ dest: fd, sync: false }) : undefined;
  const settings = config.server;
  let draining = false;

  // The cache hit, the broker's common case, is answered before fastify sees the request (fastify's per-request
  // machinery cost as much CPU as the answer itself). Everything else goes to fastify.
  let fastPath: (request: IncomingMessage, response: ServerResponse) => boolean = () => false;
  // A request the fast path took and then refused goes to fastify, which answers and logs it like any other refusal
  // (the fast path writes no line of its own); fastify counts it against the limit once more, which changes nothing
  // for a client already over it.
  let handOver: (request: IncomingMessage, response: ServerResponse) => void = () => undefined;
  const app = fastify({
    serverFactory: (handler) => {
      handOver = handler;
      return createServer(
        {
          // With its own server fastify does not apply its timeouts, so they are set here: Node's defaults (5 s
          // keep-alive) would close connections a load balancer still reuses.
          keepAliveTimeout: settings.keepAliveTimeoutMs,
          headersTimeout: settings.headersTimeoutMs,
          requestTimeout: settings.requestTimeoutMs,
          // How often Node checks the two timeouts above: by default every 30 s, which let a slow client hold a
          // connection for half a minute past them.
          connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4))),
        },
        (request, response) => {
          if (!fastPath(request, response)) handler(request, response);
        },
      );
    },
    logger: {
      level: deps.logLevel ?? 'info',
      stream: logDestination ?? logStream,
      base: { service: 'area-metrics-broker' },
      timestamp: isoTimestamp(),
      formatters: { level: (label: string) => ({ level: label }) },
      hooks: { streamWrite: logLineFilter(() => redact) },
      // Belt and braces: nothing logs these, and if a future line did, pino would censor them. Exact paths only:
      // wildcard paths made redaction the costliest step of a cached answer (about 40% of the throughput).
      redact: {
        paths: ['access_token', 'accessToken', 'clientSecret', 'token', 'req.headers.authorization', 'req.headers.cookie'],
        censor: '***',
      },
    },
    // One line per request, written in onResponse with the broker's fields, instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    routerOptions: { ignoreTrailingSlash: true },
    // Idle connections are closed by listen()'s drain, a moment after the listener closes, not at once: a request
    // may be on its way on one. A request arriving while closing is answered, not refused with 503.
    forceCloseConnections: false,
    return503OnClosing: false,
    // A URL fastify cannot decode (`/%E0%A4%A`) is answered before any hook runs: give it the broker's problem+json,
    // request id and log line instead of fastify's own JSON.
    frameworkErrors: (error, request, reply) => {
      const path = cutForLog(pathOf(request.url));
      const client = clientOf(request);
      const fields = { reqId: request.id, method: request.method, path, status: 400, problem: 'malformed-url', reason: error.code, client };
      if (errors.shouldLog('400 malformed-url')) request.log.info(fields, 'request completed');
      else request.log.debug(fields, 'request completed');
      sendAnswer(reply, answers.problem(new BrokerProblem('malformed-url', 'the URL is not valid (bad percent-encoding?)'), contextOf(request)));
    },
  });

  // No child logger per request (creating one serialises its bindings, for every cache hit, whose line is not even
  // written at the default level): the few request lines carry `reqId` themselves.
  app.setChildLoggerFactory((logger) => logger);

  for (const warning of config.warnings) app.log.warn({ config: true }, warning);

  // `--redis-url` replaces where Redis is, not how to reach it (password, TLS files).
  const password = config.redis?.password;
  const tls = config.redis?.tls;
  const redis: RedisSettings | undefined =
    deps.redisUrl === undefined
      ? config.redis
      : { url: deps.redisUrl, ...(password !== undefined ? { password } : {}), ...(tls !== undefined ? { tls } : {}) };
  let shared: RedisTokenCache | undefined;
  if (redis !== undefined) {
    const where = redisLocation(redis);
    shared = new RedisTokenCache({
      redis,
      keyPrefix: config.redisKeyPrefix,
      ...(deps.redisProbeIntervalMs !== undefined ? { probeIntervalMs: deps.redisProbeIntervalMs } : {}),
      onWarning: (message) => app.log.warn({ redisAt: where }, message),
      onStatusChange: (status, reason) => {
        if (status === 'up') app.log.info({ redis: 'up', redisAt: where }, 'Redis connected and taking commands; tokens are shared with other instances');
        else app.log.warn({ redis: 'down', redisAt: where, reason }, 'Redis unavailable; serving tokens from this instance\'s memory and the auth server');
      },
    });
    // Not awaited: a Redis that hangs must not delay start-up (the broker serves from memory until it answers).
    shared.connect();
  }
  const source = deps.tokenSource ?? new AuthServerTokenSource({ timeoutMs: config.authTimeoutMs, env: deps.env ?? {} });
  const sharedCache: SharedTokenCache | undefined = shared;
  const broker: TokenBroker = new TokenBroker({
    config,
    source,
    ...(sharedCache ? { shared: sharedCache } : {}),
    events: {
      warn: (message, fields) => app.log.warn(fields ?? {}, message),
      info: (message, fields) => app.log.info(fields ?? {}, message),
      authCall: (outcome, seconds) => metrics.authCall(outcome, seconds),
    },
    rereadSecret: (platform) => {
      const renewed = withSecretReread(config, platform);
      if (renewed === config) return undefined;
      applyConfig(renewed, `the secret file of platform ${platform} changed`);
      return renewed;
    },
    ...(deps.lockPollMs !== undefined ? { lockPollMs: deps.lockPollMs } : {}),
  });
  const metrics = new BrokerMetrics({
    backoffStates: () => broker.backoffStates(),
    platformStates: () => broker.platformStates(),
    ...(sharedCache ? { redisUp: () => sharedCache.status() === 'up' } : {}),
  });
  const limits = new RequestLimits(config.limits, { keyPrefix: config.redisKeyPrefix, ...(shared ? { redis: shared.client } : {}) });

  const hits = new HitSummary();
  const errors = new ErrorSummary();
  const logSummaries = (): void => {
    const hitSummary = hits.take();
    if (hitSummary !== undefined) app.log.info(hitSummary, 'cache hits');
    const errorSummary = errors.take();
    if (errorSummary !== undefined) app.log.info(errorSummary, 'errors not logged one by one');
  };
  const summaryTimer = setInterval(logSummaries, deps.hitSummaryIntervalMs ?? DEFAULT_HIT_SUMMARY_INTERVAL_MS);
  summaryTimer.unref();

  /** A new config in place of the old one: credentials, applications and CORS take effect at once. */
  function applyConfig(next: BrokerConfig, why: string): void {
    for (const credential of credentialsOf(next)) {
      if (!knownCredentials.some((known) => known.secret === credential.secret && known.clientId === credential.clientId)) knownCredentials.push(credential);
    }
    redact = createRedactor(knownCredentials);
    config = next;
    broker.setConfig(next);
    fastPathApplications.clear();
    watchSecretFiles();
    app.log.info({ platforms: [...next.platforms.keys()], applications: next.applications.size }, `config applied: ${why}`);
  }

  // A rotated secret file is read again when it changes. Its folder is watched, not the file: Kubernetes replaces a
  // mounted secret by swapping a `..data` link in the folder, which a watch on the old file never sees.
  const watchers = new Map<string, FSWatcher>();
  let rereadTimer: NodeJS.Timeout | undefined;
  function rereadSecretFiles(): void {
    let next = config;
    for (const name of next.platforms.keys()) next = withSecretReread(next, name);
    if (next !== config) applyConfig(next, 'a secret file changed');
  }
  function watchSecretFiles(): void {
    const folders = new Set<string>();
    for (const platform of config.platforms.values()) if (platform.clientSecretFile !== undefined) folders.add(dirname(platform.clientSecretFile));
    for (const [folder, watcher] of watchers) {
      if (!folders.has(folder)) {
        watcher.close();
        watchers.delete(folder);
      }
    }
    for (const folder of folders) {
      if (watchers.has(folder)) continue;
      try {
        const watcher = watch(folder, { persistent: false }, () => {
          // Writers replace a file in several steps: read once they are done.
          clearTimeout(rereadTimer);
          rereadTimer = setTimeout(rereadSecretFiles, 100);
          rereadTimer.unref();
        });
        watcher.on('error', () => watcher.close());
        watchers.set(folder, watcher);
      } catch (error) {
        app.log.warn({ reason: messageOf(error) }, 'cannot watch a secret file\'s folder; the secret is read again when the auth server refuses it');
      }
    }
  }
  watchSecretFiles();

  app.decorateRequest('tokenLog', null);
  app.decorateRequest('probe', false);

  const forwardedFor = (request: FastifyRequest): string | undefined => {
    const value = request.headers['x-forwarded-for'];
    return Array.isArray(value) ? value[0] : value;
  };
  const clientOf = (request: FastifyRequest): string => clientAddress(request.socket.remoteAddress, forwardedFor(request), config.server.trustProxy);
  function contextOf(request: FastifyRequest): AnswerContext {
    const query = request.query as Record<string, unknown> | undefined;
    return { requestId: request.id, origin: request.headers.origin, application: query?.application_package, draining };
  }

  // Hooks take a callback rather than being async: an async hook costs a promise and a microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!isTokenPath(request.url)) {
      done();
      return;
    }
    // Before fastify reads a body (which would answer 400, 413 or 415) or finds no route (404): the token resource
    // exists, the method does not.
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS') {
      request.tokenLog = { problem: 'method-not-allowed' };
      reply.header('allow', 'GET, OPTIONS');
      sendAnswer(reply, answers.problem(new BrokerProblem('method-not-allowed', `use GET ${TOKEN_PATH}?application_package=...`), contextOf(request)));
      return;
    }
    if (!limits.enter()) {
      request.tokenLog = { problem: 'overloaded' };
      sendAnswer(reply, answers.problem(limits.overloaded(), contextOf(request)));
      return;
    }
    reply.raw.once('close', () => limits.leave());
    limits.admit(clientOf(request)).then(
      (problem) => {
        if (problem === undefined) {
          done();
          return;
        }
        request.tokenLog = { problem: problem.kind };
        sendAnswer(reply, answers.problem(problem, contextOf(request)));
      },
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    // A keep-alive connection whose request was in flight at close would otherwise hold close() open until it
    // times out: tell the client this connection ends with this response.
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });

  // The preflight: its answer depends on Origin (CORS), so shared caches must key on it.
  const preflightOnSend: onSendHookHandler = (request, reply, payload, done) => {
    reply.header('vary', 'Origin');
    const query = request.query as Record<string, unknown> | undefined;
    const origin = allowedOrigin(config, request.headers.origin, query?.application_package);
    if (origin !== undefined) reply.headers(corsHeaders(origin, true));
    done(null, payload);
  };

  app.addHook('onResponse', (request, reply, done) => {
    const tokenLog = request.tokenLog;
    // One shape for every line (pino leaves out undefined fields), so building it stays monomorphic.
    const fields = {
      reqId: request.id,
      method: request.method,
      path: cutForLog(pathOf(request.url)),
      status: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      application: tokenLog?.application === undefined ? undefined : cutForLog(tokenLog.application),
      cache: tokenLog?.cache,
      authLatencyMs: tokenLog?.authLatencyMs,
      problem: tokenLog?.problem,
      reason: tokenLog?.reason === undefined ? undefined : cutForLog(tokenLog.reason),
      client: reply.statusCode >= 400 ? clientOf(request) : undefined,
    };
    if (request.probe) {
      request.log.debug(fields, 'request completed');
    } else if (fields.cache === 'hit' && fields.status === 200 && fields.application !== undefined) {
      // The common case, answered from memory: debug, and counted in the periodic `cache hits` info line.
      hits.record(fields.application, fields.responseTimeMs);
      request.log.debug(fields, 'request completed');
    } else if (fields.status >= 400 && !errors.shouldLog(`${fields.status} ${fields.problem ?? 'error'}`)) {
      request.log.debug(fields, 'request completed');
    } else {
      request.log.info(fields, 'request completed');
    }
    done();
  });

  function sendToken(request: FastifyRequest, reply: FastifyReply, log: TokenRequestLog, token: BrokerToken): void {
    log.cache = token.cache;
    metrics.tokenServed(token.cache);
    if (token.authLatencyMs !== undefined) log.authLatencyMs = token.authLatencyMs;
    sendAnswer(reply, answers.token(token, contextOf(request)));
  }

  function sendTokenProblem(request: FastifyRequest, reply: FastifyReply, log: TokenRequestLog, error: unknown): void {
    if (!(error instanceof BrokerProblem)) {
      reply.send(error); // to the error handler
      return;
    }
    log.problem = error.kind;
    metrics.tokenFailed(error.status);
    if (error.internalReason !== undefined) log.reason = error.internalReason;
    sendAnswer(reply, answers.problem(error, contextOf(request)));
  }

  const fastPathPrefix = `${TOKEN_PATH}?application_package=`;
  const debugLogging = app.log.level === 'debug' || app.log.level === 'trace';
  // The query value as sent → the configured application it names, so a hit decodes and validates it only once.
  // Only configured applications, spelled as sent or as encodeURIComponent spells them, are kept: the map stays as
  // small as the config, whatever other spellings clients send.
  const fastPathApplications = new Map<string, string>();
  const fastPathApplication = (encoded: string): string | undefined => {
    const known = fastPathApplications.get(encoded);
    if (known !== undefined) return known;
    // fastify's query parser reads `+` as a space and `&` as another parameter: those go to the route.
    if (encoded.includes('&') || encoded.includes('+') || encoded.includes('#')) return undefined;
    let application: string;
    try {
      application = parseApplicationPackage(decodeURIComponent(encoded));
    } catch {
      return undefined;
    }
    if (!config.applications.has(application)) return undefined;
    if (encoded === application || encoded === encodeURIComponent(application)) fastPathApplications.set(encoded, application);
    return application;
  };
  /**
   * A fresh token in memory for a plain `GET /api/gatekeeper-token?application_package=X`: the same limits, answer
   * and metrics as the route, without fastify's per-request objects. Everything else (another query shape, a miss, a
   * stale token, an error, a full in-flight cap, debug logging that wants the hit's own line) returns false and goes
   * to fastify.
   */
  fastPath = (request, response) => {
    const url = request.url;
    if (request.method !== 'GET' || debugLogging || url === undefined || !url.startsWith(fastPathPrefix)) return false;
    const startedAt = performance.now();
    const application = fastPathApplication(url.slice(fastPathPrefix.length));
    if (application === undefined) return false;
    let token: BrokerToken | undefined;
    try {
      token = broker.cachedToken(application);
    } catch {
      return false;
    }
    if (token?.cache !== 'hit') return false;
    // Read from the raw list: `request.headers` would build an object of every header for these.
    const givenId = rawHeader(request.rawHeaders, 'x-request-id');
    const givenOrigin = rawHeader(request.rawHeaders, 'origin');
    const givenForwardedFor = config.server.trustProxy ? rawHeader(request.rawHeaders, 'x-forwarded-for') : undefined;
    if (givenId === REPEATED || givenOrigin === REPEATED || givenForwardedFor === REPEATED) return false;
    if (!limits.enter()) return false; // fastify answers the 503 and logs it
    const hit = token;
    const client = clientAddress(request.socket.remoteAddress, givenForwardedFor, config.server.trustProxy);
    limits.admit(client).then(
      (problem) => {
        limits.leave();
        if (problem !== undefined) {
          handOver(request, response);
          return;
        }
        writeAnswer(response, answers.token(hit, { requestId: requestIdOf(givenId), origin: givenOrigin, application, draining }));
        metrics.tokenServed('hit');
        hits.record(application, Math.round((performance.now() - startedAt) * 10) / 10);
      },
      () => {
        limits.leave();
        handOver(request, response);
      },
    );
    return true;
  };

  // Not async: a token cached in memory is answered synchronously, without a promise; only a miss waits.
  app.get(TOKEN_PATH, (request, reply) => {
    const log: TokenRequestLog = {};
    request.tokenLog = log;
    let cached: BrokerToken | undefined;
    try {
      const query = request.query as Record<string, unknown>;
      const application = parseApplicationPackage(query.application_package);
      log.application = application;
      cached = broker.cachedToken(application);
      if (cached === undefined) {
        // Every request waiting for this fetch is answered in a task of its own, not all in the promise's one
        // microtask batch: a batch of a thousand answers leaves thousands of pending callbacks alive at once, V8
        // then allocates the objects of every later answer in the old generation (allocation-site pretenuring),
        // and the cached path ran at half speed for the rest of the process's life (docs/broker.md, Performance).
        broker.token(application).then(
          (token) => setImmediate(sendToken, request, reply, log, token),
          (error: unknown) => setImmediate(sendTokenProblem, request, reply, log, error),
        );
        return;
      }
    } catch (error) {
      sendTokenProblem(request, reply, log, error);
      return;
    }
    sendToken(request, reply, log, cached);
  });

  // CORS preflight; the headers themselves are added by its onSend only for an allowed origin.
  app.options(TOKEN_PATH, { onSend: preflightOnSend }, async (_request, reply) => reply.code(204).send());

  app.get('/healthz', async (request, reply) => {
    request.probe = true;
    return reply.header('cache-control', 'no-store').send({ status: 'ok' });
  });

  // Ready while the instance can hand out tokens. Without Redis it still can (from memory and the auth server), and a
  // platform's state is the same on every instance, so neither takes every instance out of the load balancer at
  // once: the body says what is wrong. Draining is the one reason to answer 503.
  app.get('/readyz', async (request, reply) => {
    request.probe = true;
    reply.header('cache-control', 'no-store');
    const platforms = Object.fromEntries(broker.platformStates());
    if (draining) return reply.code(503).send({ status: 'stopping', platforms });
    if (!shared) return reply.send({ status: 'ready', config: 'loaded', cache: 'memory', platforms });
    return shared.status() === 'up'
      ? reply.send({ status: 'ready', config: 'loaded', cache: 'redis', redis: 'up', platforms })
      : reply.send({ status: 'degraded', config: 'loaded', cache: 'memory', redis: 'down', platforms });
  });

  const metricsText = async (): Promise<{ contentType: string; text: string }> => ({
    contentType: metrics.registry.contentType,
    text: await metrics.registry.metrics(),
  });
  if (config.server.metricsPort === undefined) {
    app.get('/metrics', async (request, reply) => {
      request.probe = true;
      const { contentType, text } = await metricsText();
      return reply.header('cache-control', 'no-store').header('content-type', contentType).send(text);
    });
  }

  app.setNotFoundHandler(async (request, reply) => {
    request.tokenLog = { problem: 'not-found' };
    return sendAnswer(
      reply,
      answers.problem(
        new BrokerProblem(
          'not-found',
          `no such resource: ${request.method} ${cutForLog(pathOf(request.url))}; the token is at GET ${TOKEN_PATH}?application_package=...`,
        ),
        contextOf(request),
      ),
    );
  });

  app.setErrorHandler(async (error, request, reply) => {
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) {
      request.log.error({ reqId: request.id, err: error, client: clientOf(request) }, 'unexpected error');
      return sendAnswer(reply, answers.problem(new BrokerProblem('internal-error', 'the broker failed unexpectedly; see its logs'), contextOf(request)));
    }
    const details: ProblemDetails = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Bad request', status, detail: cutForLog(messageOf(error)) };
    return sendAnswer(reply, answers.problemDetails(details, contextOf(request)));
  });

  let disposed: Promise<void> | undefined;
  return {
    app,
    metricsText,
    startDraining: () => {
      draining = true;
    },
    reload: () => {
      if (deps.reloadConfig === undefined) return false;
      let next: BrokerConfig;
      try {
        next = deps.reloadConfig();
      } catch (error) {
        app.log.error({ reason: cutForLog(messageOf(error)) }, 'config not reloaded: the new one is not valid; the old one stays');
        return false;
      }
      for (const warning of next.warnings) app.log.warn({ config: true }, warning);
      applyConfig(next, 'reloaded (SIGHUP); server, limits and Redis settings take effect at the next start');
      return true;
    },
    dispose: () => {
      disposed ??= (async () => {
        clearInterval(summaryTimer);
        clearTimeout(rereadTimer);
        for (const watcher of watchers.values()) watcher.close();
        logSummaries();
        await shared?.close();
        await source.close();
      })();
      return disposed;
    },
    log: (level, message, fields) => app.log[level](fields ?? {}, message),
  };
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

/**
 * Listens on host:port (and on `server.metricsPort` for /metrics), and returns the handle that drains and stops it.
 */
export async function listen(built: BrokerApp, config: BrokerConfig, where: { host?: string; port?: number } = {}): Promise<RunningBroker> {
  const host = where.host ?? '127.0.0.1';
  const port = where.port ?? 8080;
  const settings = config.server;
  let url = '';
  let metricsServer: Server | undefined;
  let trying = port;
  try {
    url = await built.app.listen({ host, port });
    if (settings.metricsPort !== undefined) {
      trying = settings.metricsPort;
      metricsServer = await listenForMetrics(built, host, settings.metricsPort);
    }
  } catch (error) {
    await built.app.close();
    await built.dispose();
    throw new UsageError(`cannot listen on ${host}:${trying}: ${errnoCode(error) ?? messageOf(error)}`);
  }
  const metricsUrl = metricsServer === undefined ? undefined : urlOf(metricsServer.address(), host);
  built.log('info', 'broker listening', {
    url,
    ...(metricsUrl !== undefined ? { metricsUrl } : {}),
    applications: config.applications.size,
    platforms: [...config.platforms.keys()],
    cache: config.redis !== undefined ? 'redis' : 'memory',
    marginSeconds: config.marginSeconds,
  });

  let closed: Promise<void> | undefined;
  return {
    url,
    ...(metricsUrl !== undefined ? { metricsUrl } : {}),
    reload: () => built.reload(),
    close: () => {
      closed ??= (async () => {
        built.startDraining();
        built.log('info', 'broker draining: /readyz answers 503, tokens are still served', { shutdownDelaySeconds: settings.shutdownDelayMs / 1000 });
        if (settings.shutdownDelayMs > 0) await delay(settings.shutdownDelayMs);
        built.log('info', 'broker stopping: listener closed, finishing in-flight requests', { shutdownTimeoutSeconds: settings.shutdownTimeoutMs / 1000 });
        // Node stops enforcing its header and request timeouts once close() is called: a slow client would hold the
        // process open. Whatever has not finished by the shutdown timeout is destroyed.
        const server = built.app.server;
        // Node closes idle keep-alive connections the moment the listener closes, and a request a client has just
        // sent on one is lost with it. They are closed a moment later instead, and again every 100 ms: a request
        // that was on its way has arrived by then, and is answered with `Connection: close`.
        const closeIdle = server.closeIdleConnections.bind(server);
        server.closeIdleConnections = () => undefined;
        let sweeper: NodeJS.Timeout | undefined;
        const sweep = (): void => {
          closeIdle();
          sweeper = setTimeout(sweep, 100);
        };
        sweeper = setTimeout(sweep, Math.min(IDLE_CLOSE_GRACE_MS, settings.shutdownTimeoutMs / 2));
        const forced = setTimeout(() => {
          built.log('warn', 'shutdown timeout: destroying the connections still open');
          server.closeAllConnections();
        }, settings.shutdownTimeoutMs);
        try {
          await built.app.close();
        } finally {
          clearTimeout(forced);
          clearTimeout(sweeper);
        }
        if (metricsServer !== undefined) {
          const stopping = new Promise((resolve) => metricsServer?.close(resolve));
          metricsServer.closeAllConnections();
          await stopping;
        }
        await built.dispose();
        built.log('info', 'broker stopped');
      })();
      return closed;
    },
  };
}

/** Builds the broker and listens: the one call of the command, the tests and the benchmark. */
export async function startBroker(config: BrokerConfig, options: StartBrokerOptions = {}): Promise<RunningBroker> {
  const { host, port, ...deps } = options;
  const built = buildBrokerApp(config, deps);
  return listen(built, config, { ...(host !== undefined ? { host } : {}), ...(port !== undefined ? { port } : {}) });
}
