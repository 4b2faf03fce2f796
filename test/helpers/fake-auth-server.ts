import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** How the fake answers POST /oauth2/token; change it at any time with `behave`. */
export interface FakeAuthBehaviour {
  /** Answer this status with `body` instead of a token (e.g. 401 invalid_client, 500). */
  status?: number;
  body?: string;
  /** Wait before answering (timeouts, single-flight windows). */
  delayMs?: number;
  ttlSeconds?: number;
  /** Send expires_in (default true). */
  expiresIn?: boolean;
  /** Put an exp claim in the JWT (default true); with jwt false the token is opaque. */
  exp?: boolean;
  jwt?: boolean;
}

export interface FakeAuthServer {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** POST /oauth2/token requests received (whatever they were answered). */
  tokenRequests(): number;
  /** Every access_token issued so far. */
  readonly issued: string[];
  behave(behaviour: FakeAuthBehaviour): void;
  /** Stops listening and drops connections: later requests are refused (ECONNREFUSED). */
  close(): Promise<void>;
}

const SIGNING_KEY = 'fake-auth-signing-key';

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A small OAuth client-credentials server on node:http, for failure modes the sandbox does not offer. */
export async function startFakeAuthServer(
  options: { clientId?: string; clientSecret?: string } & FakeAuthBehaviour = {},
): Promise<FakeAuthServer> {
  const clientId = options.clientId ?? 'fake-client';
  const clientSecret = options.clientSecret ?? 'fake-secret-0123456789';
  let behaviour: FakeAuthBehaviour = { ...options };
  let requests = 0;
  let serial = 0;
  const issued: string[] = [];
  const sockets = new Set<Socket>();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    if (request.method !== 'POST' || !request.url?.startsWith('/oauth2/token')) {
      response.writeHead(404).end();
      return;
    }
    requests += 1;
    const current = behaviour;
    if (current.delayMs) await new Promise((resolve) => setTimeout(resolve, current.delayMs));
    if (current.status !== undefined) {
      response.writeHead(current.status, { 'content-type': 'application/json' }).end(current.body ?? '{"error":"server_error"}');
      return;
    }
    const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    if (request.headers.authorization !== expected || !new URLSearchParams(body).has('grant_type')) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'invalid_client', error_description: 'Bad client credentials' }));
      return;
    }
    const ttl = current.ttlSeconds ?? 3600;
    const now = Math.floor(Date.now() / 1000);
    serial += 1;
    let token: string;
    if (current.jwt === false) {
      token = `opaque-token-${serial}-${Math.random().toString(36).slice(2)}`;
    } else {
      const claims: Record<string, unknown> = { sub: clientId, iat: now, jti: `jti-${serial}` };
      if (current.exp !== false) claims.exp = now + ttl;
      const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url(claims)}`;
      token = `${unsigned}.${createHmac('sha256', SIGNING_KEY).update(unsigned).digest('base64url')}`;
    }
    issued.push(token);
    const answer: Record<string, unknown> = { access_token: token, token_type: 'Bearer' };
    if (current.expiresIn !== false) answer.expires_in = ttl;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  return {
    url: `http://127.0.0.1:${port}`,
    clientId,
    clientSecret,
    issued,
    tokenRequests: () => requests,
    behave: (next) => {
      behaviour = { ...next };
    },
    close: async () => {
      if (closed) return;
      closed = true;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await done;
    },
  };
}
