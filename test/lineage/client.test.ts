import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LineageClient } from '../../src/lineage/client.js';
import type { LineageSettings } from '../../src/lineage/settings.js';
import type { Logger } from '../../src/log/logger.js';

/** A logger that keeps its warnings. */
function keptLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => {}, info: () => {}, error: () => {}, warn: (message) => warnings.push(message) };
}

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown>;
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A lineage server on loopback that answers each event with `answer` (after `delayMs`), and keeps what it got. */
async function lineageServer(answer = 201, delayMs = 0): Promise<{ settings: LineageSettings; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: JSON.parse(body) as Record<string, unknown> });
      setTimeout(() => response.writeHead(answer).end(), delayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { settings: { endpoint: new URL(`http://127.0.0.1:${port}/api/v1/lineage`), namespace: 'area-metrics', apiKey: 'Lineage-Key-9f3' }, received };
}

const START = { eventType: 'START' };
const COMPLETE = { eventType: 'COMPLETE' };

describe('LineageClient', () => {
  it('posts the first event while the run works and the last at its end, as JSON with the API key as a Bearer token', async () => {
    const { settings, received } = await lineageServer();
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger });
    client.begin(START);
    await client.end(COMPLETE);
    expect(logger.warnings).toEqual([]);
    expect(received.map(({ body }) => body)).toEqual([START, COMPLETE]);
    expect(received[0]!.headers).toMatchObject({ authorization: 'Bearer Lineage-Key-9f3', 'content-type': 'application/json' });
    expect(logger.warnings).toEqual([]);
  });

  it('a server that is down costs one warning, no time, and no exception; the later event is not tried', async () => {
    const { settings } = await lineageServer();
    server!.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger });
    const started = performance.now();
    client.begin(START);
    await client.end(COMPLETE);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatch(/^OpenLineage: cannot post the START event to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/lineage: ECONNREFUSED; the import goes on/);
    expect(logger.warnings[0]).not.toContain('Lineage-Key-9f3');
  });

  it('a slow server costs at most the budget in all, with one warning', async () => {
    const { settings, received } = await lineageServer(201, 5_000);
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger, budgetMs: 300 });
    const started = performance.now();
    client.begin(START);
    await client.end(COMPLETE);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(1500);
    expect(received).toHaveLength(1);
    expect(logger.warnings).toEqual([expect.stringMatching(/cannot post the START event .*: no answer within 0\.3 s/)]);
  });

  it('the budget is shared: time spent waiting for the first event is not given to the last', async () => {
    const { settings } = await lineageServer(201, 250);
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger, budgetMs: 400 });
    const started = performance.now();
    client.begin(START);
    await client.end(COMPLETE);
    // START took about 250 ms of the 400; COMPLETE, as slow, had only the rest.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(logger.warnings).toEqual([expect.stringMatching(/cannot post the COMPLETE event .*: no answer within 0\.[0-2] s/)]);
  });

  it('a refusal (HTTP 401, 500) is one warning naming the status', async () => {
    const { settings } = await lineageServer(401);
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger });
    client.begin(START);
    await client.end(COMPLETE);
    expect(logger.warnings).toEqual([expect.stringMatching(/cannot post the START event .*: it answered HTTP 401/)]);
  });
});
