import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/** What a `respond` callback sees of a token request. */
export interface FakeAuthRequest {
  readonly authorization: string | undefined;
  readonly form: URLSearchParams;
}

/** A whole answer, for the misbehaviours the other switches do not cover (e.g. echoing the Authorization header). */
export interface FakeAuthAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** How the fake answers POST /oauth2/token; change it at any time with `behave`. */
export interface FakeAuthBehaviour {
  /** Answer this status with `body` (and `headers`) instead of a token (e.g. 401 invalid_client, 500, 429, 302). */
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Computes the whole answer from the request; wins over status/body/headers. */
  respond?: (request: FakeAuthRequest) => FakeAuthAnswer;
  /** Wait before answering (timeouts, single-flight windows). */
  delayMs?: number;
  /** Never answer (until the server is closed). */
  hang?: boolean;
  ttlSeconds?: number;
  /** Send expires_in (default true). */
  expiresIn?: boolean;
  /** Send this as expires_in instead of ttlSeconds (e.g. 8640000000000 or "9223372036854775807"). */
  expiresInValue?: unknown;
  /** Put an exp claim in the JWT (default true); with jwt false the token is opaque. */
  exp?: boolean;
  /** Use this as the exp claim instead of now + ttlSeconds (e.g. a time already past). */
  expClaim?: number;
  jwt?: boolean;
  /** Pad a token answer with a `padding` field so that the body has about this many bytes, sent in 64 KB chunks. */
  bodyBytes?: number;
}

export interface FakeAuthServer {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** POST /oauth2/token requests received (whatever they were answered). */
  tokenRequests(): number;
  /** When each token request arrived (epoch ms). */
  readonly requestTimes: number[];
  /** Every access_token issued so far (an answer the client hung up on counts too). */
  readonly issued: string[];
  /** Body bytes written for padded answers, and whether the client closed the connection before the end. */
  readonly bodies: { written: number; total: number; cutOff: boolean }[];
  behave(behaviour: FakeAuthBehaviour): void;
  /** Stops listening and drops connections: later requests are refused (ECONNREFUSED); hanging answers end. */
  close(): Promise<void>;
}

const SIGNING_KEY = 'fake-auth-signing-key';
const CHUNK_BYTES = 64 * 1024;

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Writes `text` in chunks, honouring backpressure; records how far it got before the client hung up. */
async function writeChunked(
  response: ServerResponse,
  text: string,
  record: { written: number; total: number; cutOff: boolean },
): Promise<void> {
  const bytes = Buffer.from(text);
  record.total = bytes.length;
  for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) {
    if (response.destroyed) {
      record.cutOff = true;
      return;
    }
    const chunk = bytes.subarray(offset, offset + CHUNK_BYTES);
    record.written += chunk.length;
    if (!response.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        response.on('drain', done);
        response.on('close', done);
      });
    }
  }
  if (response.destroyed) record.cutOff = true;
  else response.end();
}

/** A small OAuth client-credentials server on node:http, programmable for the failure modes the sandbox lacks. */
export async function startFakeAuthServer(
  options: {
    clientId?: string;
    clientSecret?: string /** The clock of `iat` and `exp` (a test clock); default Date.now. */;
    now?: () => number;
  } & FakeAuthBehaviour = {},
): Promise<FakeAuthServer> {
  const clock = options.now ?? Date.now;
  const clientId = options.clientId ?? 'fake-client';
  const clientSecret = options.clientSecret ?? 'fake-secret-0123456789';
  let behaviour: FakeAuthBehaviour = { ...options };
  let requests = 0;
  let serial = 0;
  const issued: string[] = [];
  const requestTimes: number[] = [];
  const bodies: { written: number; total: number; cutOff: boolean }[] = [];
  let releaseHanging: () => void = () => {};
  const closed = new Promise<void>((resolve) => (releaseHanging = resolve));

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    if (request.method !== 'POST' || !request.url?.startsWith('/oauth2/token')) {
      response.writeHead(404).end();
      return;
    }
    requests += 1;
    requestTimes.push(Date.now());
    const current = behaviour;
    if (current.hang) {
      await closed;
      return;
    }
    if (current.delayMs) await new Promise((resolve) => setTimeout(resolve, current.delayMs));
    if (current.respond) {
      const answer = current.respond({ authorization: request.headers.authorization, form: new URLSearchParams(body) });
      response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '');
      return;
    }
    if (current.status !== undefined) {
      response
        .writeHead(current.status, { 'content-type': 'application/json', ...current.headers })
        .end(current.body ?? '{"error":"server_error"}');
      return;
    }
    const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    if (request.headers.authorization !== expected || !new URLSearchParams(body).has('grant_type')) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'invalid_client', error_description: 'Bad client credentials' }));
      return;
    }
    const ttl = current.ttlSeconds ?? 3600;
    const now = Math.floor(clock() / 1000);
    serial += 1;
    let token: string;
    if (current.jwt === false) {
      token = `opaque-token-${serial}-${Math.random().toString(36).slice(2)}`;
    } else {
      const claims: Record<string, unknown> = { sub: clientId, iat: now, jti: `jti-${serial}` };
      if (current.exp !== false) claims.exp = current.expClaim ?? now + ttl;
      const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url(claims)}`;
      token = `${unsigned}.${createHmac('sha256', SIGNING_KEY).update(unsigned).digest('base64url')}`;
    }
    issued.push(token);
    const answer: Record<string, unknown> = { access_token: token, token_type: 'Bearer' };
    if (current.expiresIn !== false) answer.expires_in = current.expiresInValue ?? ttl;
    response.writeHead(200, { 'content-type': 'application/json' });
    if (current.bodyBytes === undefined) {
      response.end(JSON.stringify(answer));
      return;
    }
    const record = { written: 0, total: 0, cutOff: false };
    bodies.push(record);
    await writeChunked(response, JSON.stringify({ ...answer, padding: 'x'.repeat(current.bodyBytes) }), record);
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  const listening = await listenOnLoopback(server);
  let isClosed = false;
  return {
    url: listening.url,
    clientId,
    clientSecret,
    issued,
    requestTimes,
    bodies,
    tokenRequests: () => requests,
    behave: (next) => {
      behaviour = { ...next };
    },
    close: async () => {
      if (isClosed) return;
      isClosed = true;
      releaseHanging();
      await listening.close();
    },
  };
}
