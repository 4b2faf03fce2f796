import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LiveConfig } from '../config/live-config.js';
import type { Admission } from './limits.js';
import { TOKEN_PATH, elapsedMs, type TokenRequestHead, type TokenRequests } from './request-contract.js';
import { parseApplicationPackage, type BrokerToken, type TokenBroker } from '../token/token-broker.js';

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

const PREFIX = `${TOKEN_PATH}?application_package=`;

/**
 * The broker's common case, answered before fastify sees the request: a plain `GET
 * /api/gatekeeper-token?application_package=X` whose token is fresh in memory. fastify's per-request machinery cost
 * as much CPU as the answer itself. It goes through the same contract as the route (limits, answer, metrics, log
 * line); everything else (another query shape, a repeated header, a miss, a stale token, an error) returns false and
 * goes to fastify.
 */
export class FastPath {
  // The query value as sent → the configured application it names, so a hit decodes and validates it only once.
  // Only configured applications, spelled as sent or as encodeURIComponent spells them, are kept: the map stays as
  // small as the config, whatever other spellings clients send.
  private readonly applications = new Map<string, string>();

  constructor(
    private readonly contract: TokenRequests,
    private readonly broker: TokenBroker,
    private readonly live: LiveConfig,
  ) {
    live.onChange(() => this.applications.clear());
  }

  /** Answers the request and returns true, or returns false having touched nothing. */
  answer(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url;
    if (request.method !== 'GET' || url === undefined || !url.startsWith(PREFIX)) return false;
    const startedAt = performance.now();
    const application = this.applicationOf(url.slice(PREFIX.length));
    if (application === undefined) return false;
    const hit = this.freshToken(application);
    if (hit === undefined) return false;
    // Read from the raw list: `request.headers` would build an object of every header for these.
    const givenId = rawHeader(request.rawHeaders, 'x-request-id');
    const origin = rawHeader(request.rawHeaders, 'origin');
    const forwardedFor = this.contract.trustProxy ? rawHeader(request.rawHeaders, 'x-forwarded-for') : undefined;
    if (givenId === REPEATED || origin === REPEATED || forwardedFor === REPEATED) return false;
    const contract = this.contract;
    // With attestation on, only a token remembered as genuine for this application is answered here.
    const gate = contract.attestation;
    const attestation = gate === undefined ? undefined : rawHeader(request.rawHeaders, gate.header);
    if (attestation === REPEATED || (gate !== undefined && !gate.isRemembered(application, attestation))) return false;
    const attested = gate === undefined ? undefined : 'valid';
    const head = contract.head(givenId, origin, request.socket.remoteAddress, forwardedFor, attestation);
    // In memory the limits answer at once and the token is written in this callback, as a bare server writes; with
    // Redis it is written when the rate store answers.
    const admission = contract.admit(head.client);
    if (admission instanceof Promise) {
      admission.then(
        (problem) => this.respond(response, head, hit, application, attested, startedAt, problem),
        (error: unknown) => this.fail(response, head, error),
      );
    } else {
      this.respond(response, head, hit, application, attested, startedAt, admission);
    }
    return true;
  }

  /** Writes the token (or the limits' problem) and the request's line; a throw is a 500, as on fastify's route. */
  private respond(
    response: ServerResponse,
    head: TokenRequestHead,
    hit: BrokerToken,
    application: string,
    attested: 'valid' | undefined,
    startedAt: number,
    problem: Admission,
  ): void {
    const contract = this.contract;
    try {
      const answer =
        problem === undefined ? contract.token(hit, head, application, attested) : contract.problem(problem, head, application);
      if (problem === undefined) contract.leave();
      response.writeHead(answer.status, answer.headers).end(answer.body);
      contract.completed({
        reqId: head.requestId,
        method: 'GET',
        path: TOKEN_PATH,
        status: answer.status,
        responseTimeMs: elapsedMs(startedAt),
        application,
        cache: problem === undefined ? hit.cache : undefined,
        authLatencyMs: undefined,
        problem: problem?.kind,
        reason: undefined,
        attestation: problem === undefined ? attested : undefined,
        client: problem === undefined ? undefined : head.client,
        probe: false,
      });
    } catch (error) {
      this.fail(response, head, error);
    }
  }

  private fail(response: ServerResponse, head: TokenRequestHead, error: unknown): void {
    const answer = this.contract.unexpected(error, head);
    if (!response.headersSent) response.writeHead(answer.status, answer.headers).end(answer.body);
  }

  /** A token answered from memory without waiting, or undefined (a miss, or a problem fastify answers). */
  private freshToken(application: string): BrokerToken | undefined {
    try {
      const token = this.broker.cachedToken(application);
      return token?.cache === 'hit' ? token : undefined;
    } catch {
      return undefined;
    }
  }

  private applicationOf(encoded: string): string | undefined {
    const known = this.applications.get(encoded);
    if (known !== undefined) return known;
    // fastify's query parser reads `+` as a space and `&` as another parameter: those go to the route.
    if (encoded.includes('&') || encoded.includes('+') || encoded.includes('#')) return undefined;
    let application: string;
    try {
      application = parseApplicationPackage(decodeURIComponent(encoded));
    } catch {
      return undefined;
    }
    if (!this.live.current.applications.has(application)) return undefined;
    if (encoded === application || encoded === encodeURIComponent(application)) this.applications.set(encoded, application);
    return application;
  }
}
