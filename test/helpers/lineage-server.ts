import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One event as the lineage server received it. */
export interface ReceivedEvent {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

export interface LineageServer {
  /** What `OPENLINEAGE_URL` is set to. */
  readonly url: string;
  readonly received: ReceivedEvent[];
  /** How many events it has answered (after `delayMs`). */
  answered(): number;
  close(): Promise<void>;
}

/**
 * A stand-in for Marquez on loopback: takes each JSON event, keeps it, and answers `status` (201, as Marquez does)
 * after `delayMs`.
 */
export async function startLineageServer(options: { readonly status?: number; readonly delayMs?: number } = {}): Promise<LineageServer> {
  const received: ReceivedEvent[] = [];
  let answered = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(body) as Record<string, unknown> });
      setTimeout(() => {
        answered += 1;
        response.writeHead(options.status ?? 201).end();
      }, options.delayMs ?? 0).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answered: () => answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
