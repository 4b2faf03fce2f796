import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { AttestationGate } from '../../attestation/gate.js';
import { allowedOrigin, corsHeaders } from '../cors.js';
import type { LiveConfig } from '../../config/live-config.js';
import { BrokerProblem } from '../../problem.js';
import { TOKEN_PATH, isTokenPath, type TokenRequestHead, type TokenRequests } from '../request-contract.js';
import { parseApplicationPackage, type BrokerToken, type TokenBroker } from '../../token/token-broker.js';
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
    sendAnswer(reply, contract.token(token, log.head, applicationParam(request), log.attestation));
  };

  const sendProblem = (request: FastifyRequest, reply: FastifyReply, error: unknown): void => {
    if (!(error instanceof BrokerProblem)) {
      reply.send(error); // to the error handler
      return;
    }
    const log = logOf(request);
    log.problem = error.kind;
    if (error.internalReason !== undefined) log.reason = error.internalReason;
    sendAnswer(reply, contract.problem(error, log.head, applicationParam(request), log.attestation));
  };

  // What runs after the handler has returned (a fetch's or a verdict's callback) answers a throw of its own with the
  // error handler's 500: thrown from a callback, it would end the process.
  const guarded =
    <Value>(step: (request: FastifyRequest, reply: FastifyReply, value: Value) => void) =>
    (request: FastifyRequest, reply: FastifyReply, value: Value): void => {
      try {
        step(request, reply, value);
      } catch (error) {
        reply.send(error);
      }
    };
  const sendTokenSafely = guarded(sendToken);
  const sendProblemSafely = guarded(sendProblem);

  /** The token from memory at once, or once the auth server (or another instance) has one. */
  const serveToken = (request: FastifyRequest, reply: FastifyReply, application: string): void => {
    let cached: BrokerToken | undefined;
    try {
      cached = broker.cachedToken(application);
    } catch (error) {
      sendProblem(request, reply, error);
      return;
    }
    if (cached !== undefined) {
      sendToken(request, reply, cached);
      return;
    }
    // Every request waiting for this fetch is answered in a task of its own, not all in the promise's one microtask
    // batch: a batch of a thousand answers leaves thousands of pending callbacks alive at once, V8 then allocates
    // the objects of every later answer in the old generation (allocation-site pretenuring), and the cached path ran
    // at half speed for the rest of the process's life (docs/broker.md, Performance).
    broker.token(application).then(
      (token) => setImmediate(sendTokenSafely, request, reply, token),
      (error: unknown) => setImmediate(sendProblemSafely, request, reply, error),
    );
  };

  /** A configured application's request with attestation on: the token only after the attestation's verdict. */
  const attestThenServe = (request: FastifyRequest, reply: FastifyReply, application: string, gate: AttestationGate): void => {
    const log = logOf(request);
    gate.check(application, log.head.attestation).then(
      (verdict) => {
        log.attestation = verdict.result;
        if (verdict.reason !== undefined) log.reason = `attestation: ${verdict.reason}`;
        if (verdict.cause !== undefined) log.refusal = verdict.cause;
        const refusal = gate.problemFor(verdict);
        if (refusal === undefined) guarded(serveToken)(request, reply, application);
        else sendProblemSafely(request, reply, refusal);
      },
      (error: unknown) => sendProblemSafely(request, reply, error),
    );
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
    Promise.resolve(contract.admit(log.head.client)).then((problem) => {
      if (problem !== undefined) {
        sendProblemSafely(request, reply, problem);
        return;
      }
      reply.raw.once('close', () => contract.leave());
      next();
    }, next);
  });

  // Not async: a token cached in memory is answered synchronously, without a promise; only a miss waits. An unknown
  // application is a 400 before any attestation (application names are public; the config says which are served).
  app.get(TOKEN_PATH, (request, reply) => {
    let application: string;
    try {
      application = parseApplicationPackage(applicationParam(request));
    } catch (error) {
      sendProblem(request, reply, error);
      return;
    }
    const gate = contract.attestation;
    if (gate !== undefined && live.current.applications.has(application)) attestThenServe(request, reply, application, gate);
    else serveToken(request, reply, application);
  });

  // The preflight's answer depends on Origin (CORS), so shared caches must key on it; the CORS headers themselves
  // are added only for an allowed origin.
  const preflightOnSend: onSendHookHandler = (request, reply, payload, next) => {
    reply.header('vary', 'Origin');
    const origin = allowedOrigin(live.current, request.headers.origin, applicationParam(request));
    if (origin !== undefined) reply.headers(corsHeaders(origin, true, contract.attestation?.headerName));
    next(null, payload);
  };
  app.options(TOKEN_PATH, { onSend: preflightOnSend }, async (_request, reply) => reply.code(204).send());
  done();
});
