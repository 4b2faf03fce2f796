import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { messageOf } from '../../../errors.js';
import { cutForLog } from '../../log/log-bounds.js';
import { BrokerProblem, type ProblemDetails } from '../../problem.js';
import { TOKEN_PATH, pathOf, type TokenRequests } from '../request-contract.js';
import { appWide, applicationParam, headOf, sendAnswer } from './plugin.js';

/**
 * A URL fastify cannot route is answered before any hook runs (fastify's `frameworkErrors`): it gets the broker's
 * problem+json, request id and log line instead of fastify's own JSON. The broker's own reading of the target
 * (request-target.ts) refuses such URLs first; this stays for whatever the router refuses that it lets through.
 */
export function malformedUrlAnswer(
  contract: TokenRequests,
): (error: { code?: string }, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const head = headOf(contract, request);
    contract.completed({
      reqId: request.id,
      method: request.method,
      path: pathOf(request.url),
      status: 400,
      responseTimeMs: undefined,
      application: undefined,
      cache: undefined,
      authLatencyMs: undefined,
      problem: 'malformed-url',
      reason: error.code,
      attestation: undefined,
      client: head.client,
      probe: false,
    });
    sendAnswer(reply, contract.answer(new BrokerProblem('malformed-url', 'the URL is not valid (bad percent-encoding?)'), head, undefined));
  };
}

/** Every answer that is not a route's own is problem+json too: an unknown path (404) and an unexpected error. */
export const problems = appWide<{ contract: TokenRequests }>((app, { contract }, done) => {
  app.setNotFoundHandler(async (request, reply) => {
    request.tokenLog = { problem: 'not-found' };
    const detail = `no such resource: ${request.method} ${cutForLog(pathOf(request.url), contract.redact)}; the token is at GET ${TOKEN_PATH}?application_package=...`;
    return sendAnswer(reply, contract.answer(new BrokerProblem('not-found', detail), headOf(contract, request), applicationParam(request)));
  });

  app.setErrorHandler(async (error, request, reply) => {
    const head = headOf(contract, request);
    const status = typeof (error as { statusCode?: unknown }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) {
      request.tokenLog = { ...request.tokenLog, head, problem: 'internal-error' };
      contract.logUnexpected(error, head);
      return sendAnswer(
        reply,
        contract.answer(
          new BrokerProblem('internal-error', 'the broker failed unexpectedly; see its logs'),
          head,
          applicationParam(request),
        ),
      );
    }
    const details: ProblemDetails = {
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Bad request',
      status,
      detail: cutForLog(messageOf(error), contract.redact),
    };
    return sendAnswer(reply, contract.answer(details, head, applicationParam(request)));
  });
  done();
});
