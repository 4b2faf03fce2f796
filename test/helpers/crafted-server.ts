import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { listenOnLoopback } from './loopback.js';

/** One request a crafted server received. */
export interface CraftedCall {
  /** Path and query, without the case prefix. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** Answers one request of a case; `call` counts from 1 within the case. */
export type CraftedHandler = (request: IncomingMessage, response: ServerResponse, call: number) => void;

export interface CraftedServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Serves `handler` under `/<name>/`; returns that prefix as a base URL for `--base-url`. */
  route(name: string, handler: CraftedHandler): string;
  /** Requests received by the case so far. */
  calls(name: string): readonly CraftedCall[];
  close(): Promise<void>;
}

/** Where a proxy sends a CONNECT: through to the target, or refused with a status (e.g. 407). */
export type ProxyMode = { readonly kind: 'tunnel' } | { readonly kind: 'refuse'; readonly status: number };

export interface CraftedProxy {
  /** `127.0.0.1:<port>` (no scheme: the form curl also accepts in HTTP_PROXY). */
  readonly hostPort: string;
  /** `host:port` of every CONNECT received. */
  readonly connects: readonly string[];
  /**
   * Holds what clients send from now on (their connections stay open, their requests wait in the proxy) until
   * `release`: a vendor that stops answering mid-run, for as long as the test needs, with no clock involved.
   */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

/**
 * A small real HTTP server on loopback whose answers each test writes by hand: the kind of answer a vendor bug or a
 * proxy in front of the API produces. Cases are told apart by the first path segment, so concurrent tests share it.
 */
export async function startCraftedServer(): Promise<CraftedServer> {
  const handlers = new Map<string, CraftedHandler>();
  const calls = new Map<string, CraftedCall[]>();
  const server = createServer((request, response) => {
    const [, name = '', ...rest] = (request.url ?? '/').split('/');
    const handler = handlers.get(name);
    if (!handler) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not found."}');
      return;
    }
    const list = calls.get(name) ?? [];
    list.push({ path: `/${rest.join('/')}`, headers: request.headers });
    calls.set(name, list);
    handler(request, response, list.length);
  });
  const { port, close } = await listenOnLoopback(server);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    route(name, handler) {
      handlers.set(name, handler);
      return `${url}/${name}`;
    },
    calls: (name) => calls.get(name) ?? [],
    close,
  };
}

/** An HTTP proxy on loopback that tunnels CONNECT requests, or refuses them with a status. */
export async function startCraftedProxy(mode: ProxyMode): Promise<CraftedProxy> {
  const connects: string[] = [];
  const server = createServer((_request, response) => {
    // Only tunnels are expected (undici tunnels plain http too); anything else is a test bug worth seeing.
    response.writeHead(501).end();
  });
  server.on('connect', (request: IncomingMessage, client: Socket) => {
    const target = request.url ?? '';
    connects.push(target);
    if (mode.kind === 'refuse') {
      const authenticate = mode.status === 407 ? 'Proxy-Authenticate: Basic realm="proxy"\r\n' : '';
      client.end(`HTTP/1.1 ${mode.status} Refused\r\n${authenticate}Content-Length: 0\r\n\r\n`);
      return;
    }
    const [host = '', port = '80'] = target.split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      // Each chunk waits its turn behind those held before it, so a held connection's bytes keep their order.
      client.on('data', (chunk: Buffer) => {
        if (gate.held || gate.queued.length > 0) gate.queued.push(() => upstream.write(chunk));
        else upstream.write(chunk);
      });
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });
  const gate = { held: false, queued: [] as (() => void)[] };
  const { port, close } = await listenOnLoopback(server);
  return {
    hostPort: `127.0.0.1:${port}`,
    connects,
    hold: () => {
      gate.held = true;
    },
    release: () => {
      gate.held = false;
      for (const send of gate.queued.splice(0)) send();
    },
    close,
  };
}

/** A daily result of the unique-users metric. */
export function usersResult(storeCode: string, day: string, zones = 2): Record<string, unknown> {
  return {
    store_code: storeCode,
    date: `${day}T00:00:00Z`,
    granularity: 'daily',
    values: Array.from({ length: zones }, (_, index) => ({ zone: `Z${index}`, unique_users: index })),
  };
}

/** The API's paginated envelope. */
export function envelope(results: readonly unknown[], options: { count?: number; next?: string | null } = {}): string {
  return JSON.stringify({ count: options.count ?? results.length, next: options.next ?? null, previous: null, results });
}

/** Answers with JSON. */
export function sendJson(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
}
