import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { fastify, LogController, type FastifyReply, type onSendHookHandler } from 'fastify';
import { pino } from 'pino';
import { UsageError, messageOf } from '../errors.js';
import { createRedactor, type Credential, type Redactor } from '../redact.js';
import { RedisTokenCache, type SharedTokenCache } from './cache.js';
import { HitSummary } from './hit-summary.js';
import type { BrokerConfig } from './config.js';
import { allowedOrigin, corsHeaders } from './cors.js';
import { servedExpiresIn } from './expiry.js';
import { BrokerMetrics } from './metrics.js';
import { BrokerProblem, PROBLEM_CONTENT_TYPE, RETRY_AFTER_SECONDS, type ProblemDetails } from './problem.js';
import { TokenBroker, parseApplicationPackage, type BrokerToken, type CacheOutcome } from './token-broker.js';
import { AuthServerTokenSource, type TokenSource } from './token-source.js';

export const TOKEN_PATH = '/api/gatekeeper-token';

export const DEFAULT_HIT_SUMMARY_INTERVAL_MS = 60_000;

export type BrokerLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface StartBrokerOptions {
  /** Default 127.0.0.1 (put a load balancer or reverse proxy in front; use 0.0.0.0 in a container). */
  readonly host?: string;
  /** Default 8080; 0 picks a free port (see the returned url). */
  readonly port?: number;
  /** Overrides the config's cache.redisUrl. */
  readonly redisUrl?: string;
  /**
   * Where the JSON log lines go; default process.stderr. A stream backed by a file descriptor (process.stderr) is
   * written asynchronously through pino's buffered destination, so logging never blocks a response.
   */
  readonly logStream?: Writable;
  readonly logLevel?: BrokerLogLevel;
  /** Replaces the auth-server client (tests). */
  readonly tokenSource?: TokenSource;
  /** How often the `cache hits` summary line is logged (when there were hits); default 60 s. */
  readonly hitSummaryIntervalMs?: number;
  /** How often an instance that lost the cross-instance refresh lock looks for the winner's token (tests). */
  readonly lockPollMs?: number;
}

export interface RunningBroker {
  /** e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Stops accepting connections, lets in-flight requests finish, then closes Redis and the auth-server pool. */
  close(): Promise<void>;
  /** Logs a library's own console output as a JSON line (redacted like every line), so stderr stays JSON. */
  logExternal(level: 'warn' | 'error', message: string): void;
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
    /** Set by /healthz and /readyz, whose `request completed` line is debug, not info. */
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

/**
 * A token's 200 body as bytes, built once per second of its `expires_in` (the true remaining validity, the only part
 * that changes) instead of for every answer: a cached token is served thousands of times a second.
 */
class TokenBodies {
  private readonly latest = new Map<string, { readonly expiresIn: number | undefined; readonly bytes: Buffer }>();

  body(token: BrokerToken): Buffer {
    const expiresIn = token.expiresAt === undefined ? undefined : servedExpiresIn(token.expiresAt, Date.now());
    const cached = this.latest.get(token.accessToken);
    if (cached !== undefined && cached.expiresIn === expiresIn) return cached.bytes;
    if (this.latest.size >= 64) this.latest.clear(); // a few tokens per application: refetched ones drop out here
    const start = `{"access_token":${JSON.stringify(token.accessToken)}`;
    const bytes = Buffer.from(expiresIn === undefined ? `${start}}` : `${start},"expires_in":${expiresIn}}`);
    this.latest.set(token.accessToken, { expiresIn, bytes });
    return bytes;
  }
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
function logLineFilter(redact: Redactor): (line: string) => string {
  return (line) => {
    const clean = redact(line);
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
  return credentials;
}

/** A request URL without its query string (the query can be long, and only the path identifies the resource). */
function pathOf(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

// Request ids from a load balancer are reused when they look like ids; anything else is replaced (log injection).
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

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

function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * The headers of a token answer, whichever path serves it (with `Vary: Origin` and CORS added per request).
 * `Cache-Control: no-store` keeps the token out of every cache, so the HTTP/1.0 `Pragma` is left out: each header is
 * work for the broker and for every client. The charset is the one fastify gives a JSON string body.
 */
const TOKEN_ANSWER_HEADERS = { 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8' } as const;

function redisLocation(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`; // no password
  } catch {
    return 'redis';
  }
}


/**
 * Starts the token broker (SPEC 4) on host:port. Fastify gives routing, request ids, pino JSON logging with
 * redaction, and graceful close (in-flight requests finish) without hand-written plumbing.
 */
export async function startBroker(config: BrokerConfig, options: StartBrokerOptions = {}): Promise<RunningBroker> {
  const redact = createRedactor(credentialsOf(config));
  const sendProblem = (reply: FastifyReply, problem: ProblemDetails, retryAfterSeconds?: number): FastifyReply => {
    reply.code(problem.status).header('content-type', PROBLEM_CONTENT_TYPE).header('cache-control', 'no-store');
    if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
    return reply.send(redact(JSON.stringify(problem)));
  };
  const sendBrokerProblem = (reply: FastifyReply, problem: BrokerProblem): FastifyReply =>
    sendProblem(reply, problem.toJSON(), problem.status === 503 ? (problem.retryAfterSeconds ?? RETRY_AFTER_SECONDS) : undefined);
  const logStream = options.logStream ?? process.stderr;
  const fd = (logStream as { fd?: unknown }).fd;
  // One synchronous write(2) per request was a fifth of the broker's CPU under load; an fd gets an async destination.
  const logDestination = typeof fd === 'number' ? pino.destination({ dest: fd, sync: false }) : undefined;
  // The cache hit, the broker's common case, is answered before fastify sees the request (see cachedAnswer below):
  // fastify's per-request machinery (request and reply objects, hooks, routing) cost as much CPU as the answer itself.
  let cachedAnswer: (request: IncomingMessage, response: ServerResponse) => boolean = () => false;
  const app = fastify({
    serverFactory: (handler) =>
      createServer((request, response) => {
        if (!cachedAnswer(request, response)) handler(request, response);
      }),
    logger: {
      level: options.logLevel ?? 'info',
      stream: logDestination ?? logStream,
      base: { service: 'area-metrics-broker' },
      timestamp: isoTimestamp(),
      formatters: { level: (label: string) => ({ level: label }) },
      hooks: { streamWrite: logLineFilter(redact) },
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
    forceCloseConnections: 'idle',
    // A URL fastify cannot decode (`/%E0%A4%A`) is answered before any hook runs: give it the broker's problem+json,
    // request id and log line instead of fastify's own JSON.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      const fields = { reqId: request.id, method: request.method, path: pathOf(request.url), status: 400, problem: 'malformed-url', reason: error.code };
      request.log.info(fields, 'request completed');
      sendBrokerProblem(reply, new BrokerProblem('malformed-url', 'the URL is not valid (bad percent-encoding?)'));
    },
  });

  // No child logger per request (creating one serialises its bindings, for every cache hit, whose line is not even
  // written at the default level): the few request lines carry `reqId` themselves.
  app.setChildLoggerFactory((logger) => logger);

  for (const warning of config.warnings) app.log.warn({ config: true }, warning);

  const redisUrl = options.redisUrl ?? config.redisUrl;
  let shared: RedisTokenCache | undefined;
  if (redisUrl !== undefined) {
    const where = redisLocation(redisUrl);
    shared = new RedisTokenCache({
      url: redisUrl,
      keyPrefix: config.redisKeyPrefix,
      onStatusChange: (status, reason) => {
        if (status === 'up') app.log.info({ redis: 'up', redisAt: where }, 'Redis connected; tokens are shared with other instances');
        else app.log.warn({ redis: 'down', redisAt: where, reason }, 'Redis unavailable; serving tokens from this instance\'s memory and the auth server');
      },
    });
    await shared.connect();
  }
  const source = options.tokenSource ?? new AuthServerTokenSource({ timeoutMs: config.authTimeoutMs });
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
    ...(options.lockPollMs !== undefined ? { lockPollMs: options.lockPollMs } : {}),
  });
  const metrics = new BrokerMetrics({
    backoffStates: () => broker.backoffStates(),
    platforms: [...config.platforms.keys()],
    ...(sharedCache ? { redisUp: () => sharedCache.status() === 'up' } : {}),
  });

  let closing = false;
  const bodies = new TokenBodies();
  const hits = new HitSummary();
  const logHits = (): void => {
    const summary = hits.take();
    if (summary !== undefined) app.log.info(summary, 'cache hits');
  };
  const hitSummaryTimer = setInterval(logHits, options.hitSummaryIntervalMs ?? DEFAULT_HIT_SUMMARY_INTERVAL_MS);
  hitSummaryTimer.unref();
  app.decorateRequest('tokenLog', null);
  app.decorateRequest('probe', false);

  // Hooks take a callback rather than being async: an async hook costs a promise and a microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Before fastify reads a body (which would answer 400, 413 or 415) or finds no route (404): the token resource
    // exists, the method does not.
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS' && isTokenPath(request.url)) {
      request.tokenLog = { problem: 'method-not-allowed' };
      reply.header('allow', 'GET, OPTIONS').header('vary', 'Origin');
      sendBrokerProblem(reply, new BrokerProblem('method-not-allowed', `use GET ${TOKEN_PATH}?application_package=...`));
      return;
    }
    done();
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    // A keep-alive connection whose request was in flight at close would otherwise hold close() open until it
    // times out: tell the client this connection ends with this response.
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  // Only the token routes: their answer depends on Origin (CORS), so shared caches must key on it.
  const tokenRouteOnSend: onSendHookHandler = (request, reply, payload, done) => {
    reply.header('vary', 'Origin');
    const query = request.query as Record<string, unknown> | undefined;
    const origin = allowedOrigin(config, request.headers.origin, query?.application_package);
    if (origin !== undefined) reply.headers(corsHeaders(origin, request.method === 'OPTIONS'));
    done(null, payload);
  };

  app.addHook('onResponse', (request, reply, done) => {
    const tokenLog = request.tokenLog;
    // One shape for every line (pino leaves out undefined fields), so building it stays monomorphic.
    const fields = {
      reqId: request.id,
      method: request.method,
      path: pathOf(request.url),
      status: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      application: tokenLog?.application,
      cache: tokenLog?.cache,
      authLatencyMs: tokenLog?.authLatencyMs,
      problem: tokenLog?.problem,
      reason: tokenLog?.reason,
    };
    if (request.probe) {
      request.log.debug(fields, 'request completed');
    } else if (fields.cache === 'hit' && fields.status === 200 && fields.application !== undefined) {
      // The common case, answered from memory: debug, and counted in the periodic `cache hits` info line.
      hits.record(fields.application, fields.responseTimeMs);
      request.log.debug(fields, 'request completed');
    } else {
      request.log.info(fields, 'request completed');
    }
    done();
  });

  function sendToken(reply: FastifyReply, log: TokenRequestLog, token: BrokerToken): void {
    log.cache = token.cache;
    metrics.tokenServed(token.cache);
    if (token.authLatencyMs !== undefined) log.authLatencyMs = token.authLatencyMs;
    reply.headers(TOKEN_ANSWER_HEADERS).send(bodies.body(token));
  }

  function sendTokenProblem(reply: FastifyReply, log: TokenRequestLog, error: unknown): void {
    if (!(error instanceof BrokerProblem)) {
      reply.send(error); // to the error handler
      return;
    }
    log.problem = error.kind;
    metrics.tokenFailed(error.status);
    if (error.internalReason !== undefined) log.reason = error.internalReason;
    sendBrokerProblem(reply, error);
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
   * A fresh token in memory for a plain `GET /api/gatekeeper-token?application_package=X`, answered with the same
   * headers and body as the route below, counted in the metrics and the `cache hits` line. Everything else (another
   * query shape, a miss, a stale token, an error, debug logging that wants the hit's own line, shutdown) returns false
   * and goes to fastify.
   */
  cachedAnswer = (request, response) => {
    const url = request.url;
    if (request.method !== 'GET' || closing || debugLogging || url === undefined || !url.startsWith(fastPathPrefix)) return false;
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
    // Read from the raw list: `request.headers` would build an object of every header for these two.
    const givenId = rawHeader(request.rawHeaders, 'x-request-id');
    const givenOrigin = rawHeader(request.rawHeaders, 'origin');
    if (givenId === REPEATED || givenOrigin === REPEATED) return false;
    const body = bodies.body(token);
    // Every field in one literal (the body, and so its length, is known first); CORS is the rare addition.
    const headers: OutgoingHttpHeaders = {
      'x-request-id': requestIdOf(givenId),
      'cache-control': TOKEN_ANSWER_HEADERS['cache-control'],
      'content-type': TOKEN_ANSWER_HEADERS['content-type'],
      vary: 'Origin',
      'content-length': body.length,
    };
    const origin = allowedOrigin(config, givenOrigin, application);
    if (origin !== undefined) Object.assign(headers, corsHeaders(origin, false));
    response.writeHead(200, headers).end(body);
    metrics.tokenServed('hit');
    hits.record(application, Math.round((performance.now() - startedAt) * 10) / 10);
    return true;
  };

  // Not async: a token cached in memory is answered synchronously, without a promise; only a miss waits.
  app.get(TOKEN_PATH, { onSend: tokenRouteOnSend }, (request, reply) => {
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
          (token) => setImmediate(sendToken, reply, log, token),
          (error: unknown) => setImmediate(sendTokenProblem, reply, log, error),
        );
        return;
      }
    } catch (error) {
      sendTokenProblem(reply, log, error);
      return;
    }
    sendToken(reply, log, cached);
  });

  // CORS preflight; the headers themselves are added by the route's onSend only for an allowed origin.
  app.options(TOKEN_PATH, { onSend: tokenRouteOnSend }, async (_request, reply) => reply.code(204).send());

  app.get('/healthz', async (request, reply) => {
    request.probe = true;
    return reply.header('cache-control', 'no-store').send({ status: 'ok' });
  });

  // Ready while the instance can hand out tokens. Without Redis it still can (from memory and the auth server), so a
  // Redis outage is reported in the body but does not take every instance out of the load balancer at once.
  app.get('/readyz', async (request, reply) => {
    request.probe = true;
    reply.header('cache-control', 'no-store');
    if (closing) return reply.code(503).send({ status: 'stopping' });
    if (!shared) return reply.send({ status: 'ready', config: 'loaded', cache: 'memory' });
    const redisUp = shared.status() === 'up' && (await shared.ping());
    return redisUp
      ? reply.send({ status: 'ready', config: 'loaded', cache: 'redis', redis: 'up' })
      : reply.send({ status: 'degraded', config: 'loaded', cache: 'memory', redis: 'down' });
  });

  app.get('/metrics', async (request, reply) => {
    request.probe = true;
    const text = await metrics.registry.metrics();
    return reply.header('cache-control', 'no-store').header('content-type', metrics.registry.contentType).send(text);
  });

  app.setNotFoundHandler(async (request, reply) =>
    sendBrokerProblem(
      reply,
      new BrokerProblem(
        'not-found',
        `no such resource: ${request.method} ${pathOf(request.url)}; the token is at GET ${TOKEN_PATH}?application_package=...`,
      ),
    ),
  );

  app.setErrorHandler(async (error, request, reply) => {
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) {
      request.log.error({ reqId: request.id, err: error }, 'unexpected error');
      return sendBrokerProblem(reply, new BrokerProblem('internal-error', 'the broker failed unexpectedly; see its logs'));
    }
    return sendProblem(reply, {
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Bad request',
      status,
      detail: messageOf(error),
    });
  });

  let url: string;
  try {
    url = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
  } catch (error) {
    clearInterval(hitSummaryTimer);
    await shared?.close();
    await source.close();
    const code = (error as { code?: unknown }).code;
    throw new UsageError(
      `cannot listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 8080}: ${typeof code === 'string' ? code : messageOf(error)}`,
    );
  }
  app.log.info(
    {
      url,
      applications: config.applications.size,
      platforms: [...config.platforms.keys()],
      cache: shared ? 'redis' : 'memory',
      marginSeconds: config.marginSeconds,
    },
    'broker listening',
  );

  let closed: Promise<void> | undefined;
  return {
    url,
    logExternal: (level, message) => app.log[level]({ external: true }, message.replace(/\s+/g, ' ').trim()),
    close: () => {
      closed ??= (async () => {
        closing = true;
        app.log.info('broker stopping: finishing in-flight requests');
        await app.close();
        clearInterval(hitSummaryTimer);
        logHits();
        await shared?.close();
        await source.close();
        // Pending asynchronous log writes keep the process alive until they are done; flushSync here could
        // overtake a write in flight and reorder the last lines.
        app.log.info('broker stopped');
      })();
      return closed;
    },
  };
}
