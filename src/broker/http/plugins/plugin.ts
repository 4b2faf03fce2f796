import type { FastifyPluginCallback, FastifyPluginOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { Answer } from '../answers.js';
import type { AttestationResult } from '../../attestation/gate.js';
import type { RefusalCause } from '../../attestation/verifier.js';
import type { CacheOutcome } from '../../token/token-broker.js';
import type { TokenRequestHead, TokenRequests } from '../request-contract.js';

/** What the token route adds to its `request completed` line. */
export interface TokenRequestLog {
  head?: TokenRequestHead;
  application?: string;
  cache?: CacheOutcome;
  authLatencyMs?: number;
  problem?: string;
  reason?: string;
  attestation?: AttestationResult;
  refusal?: RefusalCause;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the token route and the problem answers (a per-request decoration: cheaper than a WeakMap lookup). */
    tokenLog: TokenRequestLog | null;
    /** Set by /healthz, /readyz and /metrics, whose `request completed` line is debug, not info. */
    probe: boolean;
  }
}

/**
 * A plugin whose hooks, handlers and decorations apply to the whole app, not to a context of its own (what the
 * fastify-plugin package marks): the broker's plugins are its parts, registered once, in order.
 */
export function appWide<Options extends FastifyPluginOptions>(plugin: FastifyPluginCallback<Options>): FastifyPluginCallback<Options> {
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true });
}

/** The request's `application_package` as the query has it (a string, several, or none), for CORS. */
export function applicationParam(request: FastifyRequest): unknown {
  return (request.query as Record<string, unknown> | undefined)?.application_package;
}

/** The contract's view of a request fastify parsed; its id is fastify's (from X-Request-Id when that looks like one). */
export function headOf(contract: TokenRequests, request: FastifyRequest): TokenRequestHead {
  const forwardedFor = request.headers['x-forwarded-for'];
  const gate = contract.attestation;
  const attestation = gate === undefined ? undefined : request.headers[gate.header];
  return {
    requestId: request.id,
    origin: request.headers.origin,
    client: contract.clientOf(request.socket.remoteAddress, Array.isArray(forwardedFor) ? forwardedFor[0] : forwardedFor),
    // A repeated attestation header is not a token (Node joins custom headers' values with ", ").
    attestation: typeof attestation === 'string' ? attestation : undefined,
  };
}

export function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}
