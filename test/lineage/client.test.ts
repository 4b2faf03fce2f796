import { afterEach, describe, expect, it } from 'vitest';
import { LineageClient } from '../../src/lineage/client.js';
import type { LineageSettings } from '../../src/lineage/settings.js';
import type { Logger } from '../../src/log/logger.js';
import { startLineageServer, type LineageServer, type ReceivedEvent } from '../helpers/lineage-server.js';

/** A logger that keeps its warnings. */
function keptLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => {}, info: () => {}, error: () => {}, warn: (message) => warnings.push(message) };
}

let server: LineageServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A lineage server on loopback that answers each event with `status` (after `delayMs`), and keeps what it got. */
async function lineageServer(status = 201, delayMs = 0): Promise<{ settings: LineageSettings; received: ReceivedEvent[] }> {
  server = await startLineageServer({ status, delayMs });
  return {
    settings: { endpoint: new URL(`${server.url}/api/v1/lineage`), namespace: 'area-metrics', apiKey: 'Lineage-Key-9f3' },
    received: server.received,
  };
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
    await server!.close();
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger });
    const started = performance.now();
    client.begin(START);
    await client.end(COMPLETE);
    // Far below the 5 s budget a wait for the down server would use up, with room for a busy machine.
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatch(
      /^OpenLineage: cannot post the START event to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/lineage: ECONNREFUSED; the import goes on/,
    );
    expect(logger.warnings[0]).not.toContain('Lineage-Key-9f3');
  });

  it('a slow server costs at most the budget in all, with one warning', async () => {
    const { settings, received } = await lineageServer(201, 5_000);
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger, budgetMs: 300 });
    const started = performance.now();
    client.begin(START);
    await client.end(COMPLETE);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    // The server answers after 5 s: a run that waited for it would find it answered (a condition, not a time).
    expect(server?.answered()).toBe(0);
    expect(received).toHaveLength(1);
    expect(logger.warnings).toEqual([expect.stringMatching(/cannot post the START event .*: no answer within 0\.3 s/)]);
  });

  it('the budget is shared: time spent waiting for the first event is not given to the last', async () => {
    const { settings } = await lineageServer(201, 250);
    const logger = keptLogger();
    const client = new LineageClient({ settings, env: {}, logger, budgetMs: 400 });
    client.begin(START);
    await client.end(COMPLETE);
    // START took about 250 ms of the 400; COMPLETE, as slow, had only the rest (a budget of its own would say 0.4 s).
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
