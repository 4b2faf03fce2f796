import { pathOf, type DrainState, type TokenRequests } from '../request-contract.js';
import { appWide, headOf } from './plugin.js';

/**
 * What every request fastify answers gets: its id echoed in `X-Request-Id`, `Connection: close` while draining (a
 * keep-alive connection whose request was in flight would otherwise hold the close open until it timed out), and one
 * `request completed` line through the token contract (fastify's own two lines are off).
 */
export const requestLog = appWide<{ contract: TokenRequests; drain: DrainState }>((app, { contract, drain }, done) => {
  app.decorateRequest('tokenLog', null);
  app.decorateRequest('probe', false);

  // Hooks take a callback rather than being async: an async hook costs a promise and a microtask per request.
  app.addHook('onRequest', (request, reply, next) => {
    reply.header('x-request-id', request.id);
    next();
  });

  app.addHook('onSend', (_request, reply, payload, next) => {
    if (drain.draining) reply.header('connection', 'close');
    next(null, payload);
  });

  app.addHook('onResponse', (request, reply, next) => {
    const log = request.tokenLog;
    const failed = reply.statusCode >= 400;
    contract.completed({
      reqId: request.id,
      method: request.method,
      path: pathOf(request.url),
      status: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      application: log?.application,
      cache: log?.cache,
      authLatencyMs: log?.authLatencyMs,
      problem: log?.problem,
      reason: log?.reason,
      attestation: log?.attestation,
      ...(log?.refusal === undefined ? {} : { refusal: log.refusal }),
      client: failed ? (log?.head?.client ?? headOf(contract, request).client) : undefined,
      probe: request.probe,
    });
    next();
  });
  done();
});
