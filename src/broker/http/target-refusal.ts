import type { IncomingMessage, ServerResponse } from 'node:http';
import { BrokerProblem } from '../problem.js';
import { elapsedMs, pathOf, type TokenRequests } from './request-contract.js';
import type { RefusedTarget } from './request-target.js';

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A request whose target the broker does not read (see readRequestTarget): 400 problem+json before any work, after
 * it has taken its point of the client's rate like a token request (a client sending odd spellings is limited like
 * any other), with the usual request id, headers and one bounded log line.
 */
export function answerRefusedTarget(
  contract: TokenRequests,
  request: IncomingMessage,
  response: ServerResponse,
  refusal: RefusedTarget,
): void {
  const startedAt = performance.now();
  const headers = request.headers;
  const head = contract.head(
    headers['x-request-id'],
    headerValue(headers.origin),
    request.socket.remoteAddress,
    headerValue(headers['x-forwarded-for']),
  );
  const malformed = new BrokerProblem('malformed-url', `the request target is not valid (${refusal.refused})`);
  Promise.resolve(contract.admit(head.client))
    .then((limited) => {
      if (limited === undefined) contract.leave();
      const problem = limited ?? malformed;
      const answer = contract.answer(problem, head, undefined);
      response.writeHead(answer.status, answer.headers).end(answer.body);
      contract.completed({
        reqId: head.requestId,
        method: request.method ?? 'GET',
        path: pathOf(request.url ?? ''),
        status: answer.status,
        responseTimeMs: elapsedMs(startedAt),
        application: undefined,
        cache: undefined,
        authLatencyMs: undefined,
        problem: problem.kind,
        reason: refusal.refused,
        attestation: undefined,
        client: head.client,
        probe: false,
      });
    })
    .catch((error: unknown) => {
      const answer = contract.unexpected(error, head);
      if (!response.headersSent) response.writeHead(answer.status, answer.headers).end(answer.body);
    });
}
