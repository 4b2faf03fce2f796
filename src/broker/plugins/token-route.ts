import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { allowedOrigin, corsHeaders } from '../cors.js';
import type { LiveConfig } from '../live-config.js';
import { BrokerProblem } from '../problem.js';
import { TOKEN_PATH, isTokenPath, type TokenRequestHead, type TokenRequests } from '../request-contract.js';
import { parseApplicationPackage, type BrokerToken, type TokenBroker } from '../token-broker.js';
import { appWide, applicationParam, headOf, sendAnswer, type TokenRequestLog } from './plugin.js';

export interface TokenRouteOptions {
  readonly contract: TokenRequests;
  readonly broker: TokenBroker;
  readonly live: LiveConfig;
}

const ALLOWED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function validApplication(request: FastifyRequest): string | undefined {
  try {
    return parseApplicationPackage(applicationParam(request));
  } catch {
    return undefined;
  }
}

/**
 * `GET /api/gatekeeper-token` for whatever the fast path left (a miss, a stale token, a problem, an unusual
 * request), and its CORS preflight: the same contract as the fast path, through fastify.
 */
export const tokenRoute = appWide<TokenRouteOptions>((app, { contract, broker, live }, done) => {
  const logOf = (request: FastifyRequest): TokenRequestLog & { head: TokenRequestHead } => {
    const log = request.tokenLog;
    if (log?.head === undefined) throw new Error('the token route runs after its onRequest hook');
    return log as TokenRequestLog & { head: TokenRequestHead };
  };

  const sendToken = (request: FastifyRequest, reply: FastifyReply, token: BrokerToken): void => {
    const log = logOf(request);
    log.cache = token.cache;
    if (token.authLatencyMs !== undefined) log.authLatencyMs = token.authLatencyMs;
    sendAnswer(reply, contract.token(token, log.head, applicationParam(request)));
  };

  const sendProblem = (request: FastifyRequest, reply: FastifyReply, error: unknown): void => {
    if (!(error instanceof BrokerProblem)) {
      reply.send(error); // to the error handler
      return;
    }
    const log = logOf(request);
    log.problem = error.kind;
    if (error.internalReason !== undefined) log.reason = error.internalReason;
    sendAnswer(reply, contract.problem(error, log.head, applicationParam(request)));
  };

  // Before fastify reads a body (which would answer 400, 413 or 415) or finds no route (404): the token resource
  // exists, the method does not. Then the limits.
  app.addHook('onRequest', (request, reply, next) => {
    if (!isTokenPath(request.url)) {
      next();
      return;
    }
    const log: TokenRequestLog & { head: TokenRequestHead } = { head: headOf(contract, request) };
    const application = validApplication(request);
    if (application !== undefined) log.application = application; // a refused request's line names it too
    request.tokenLog = log;
    if (!ALLOWED_METHODS.has(request.method)) {
      reply.header('allow', 'GET, OPTIONS');
      sendProblem(request, reply, new BrokerProblem('method-not-allowed', `use GET ${TOKEN_PATH}?application_package=...`));
      return;
    }
    contract.admit(log.head.client).then((problem) => {
      if (problem !== undefined) {
        sendProblem(request, reply, problem);
        return;
      }
      reply.raw.once('close', () => contract.leave());
      next();
    }, next);
  });

  // Not async: a token cached in memory is answered synchronously, without a promise; only a miss waits.
  app.get(TOKEN_PATH, (request, reply) => {
    let cached: BrokerToken | undefined;
    try {
      const application = parseApplicationPackage(applicationParam(request));
      cached = broker.cachedToken(application);
      if (cached === undefined) {
        // Every request waiting for this fetch is answered in a task of its own, not all in the promise's one
        // microtask batch: a batch of a thousand answers leaves thousands of pending callbacks alive at once, V8
        // then allocates the objects of every later answer in the old generation (allocation-site pretenuring),
        // and the cached path ran at half speed for the rest of the process's life (docs/broker.md, Performance).
        broker.token(application).then(
          (token) => setImmediate(sendToken, request, reply, token),
          (error: unknown) => setImmediate(sendProblem, request, reply, error),
        );
        return;
      }
    } catch (error) {
      sendProblem(request, reply, error);
      return;
    }
    sendToken(request, reply, cached);
  });

  // The preflight's answer depends on Origin (CORS), so shared caches must key on it; the CORS headers themselves
  // are added only for an allowed origin.
  const preflightOnSend: onSendHookHandler = (request, reply, payload, next) => {
    reply.header('vary', 'Origin');
    const origin = allowedOrigin(live.current, request.headers.origin, applicationParam(request));
    if (origin !== undefined) reply.headers(corsHeaders(origin, true));
    next(null, payload);
  };
  app.options(TOKEN_PATH, { onSend: preflightOnSend }, async (_request, reply) => reply.code(204).send());
  done();
});
