import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MalformedBodyError } from '../../src/fetch/http-client.js';
import { decodePage, type PageJob } from '../../src/metrics/page.js';
import { inlineDecoder, workerDecoder, type PageDecoder } from '../../src/metrics/page-decoder.js';
import { assertBuilt } from '../helpers/cli.js';

// Worker threads run compiled JavaScript: the pool is tested with the built worker, as the binary uses it.
const WORKER_URL = new URL('../../dist/metrics/page-worker.js', import.meta.url);
const job: PageJob = { metric: 'unique-users', encoding: { format: 'ndjson', shape: 'rows' } };

function body(store: string, zones = 3): Uint8Array {
  const values = Array.from({ length: zones }, (_, index) => ({ zone: `Zone ${index} ✓`, unique_users: index }));
  const result = { store_code: store, date: '2026-11-20T00:00:00Z', granularity: 'daily', values };
  return new TextEncoder().encode(JSON.stringify({ count: 1, next: null, previous: null, results: [result] }));
}

let decoder: PageDecoder | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await decoder?.close();
  decoder = undefined;
});

describe('workerDecoder', () => {
  it('gives exactly what decodePage gives on the main thread, for many pages at once over two threads', async () => {
    decoder = workerDecoder({ threads: 2, workerUrl: WORKER_URL });
    const stores = Array.from({ length: 40 }, (_, index) => `S${index}`);
    const pages = await Promise.all(stores.map((store) => decoder!.decode(body(store, 1 + (stores.indexOf(store) % 5)), job)));
    stores.forEach((store, index) => {
      const expected = decodePage(body(store, 1 + (index % 5)), job);
      expect(pages[index]).toEqual(expected);
    });
  });

  it('hands the body over to the thread instead of copying it', async () => {
    decoder = workerDecoder({ threads: 1, workerUrl: WORKER_URL });
    const page = body('S1');
    await decoder.decode(page, job);
    expect(page.byteLength).toBe(0);
  });

  it('rejects a malformed body with MalformedBodyError (so the client retries it) and goes on working', async () => {
    decoder = workerDecoder({ threads: 1, workerUrl: WORKER_URL });
    const error = await decoder.decode(new TextEncoder().encode('{"count":'), job).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MalformedBodyError);
    expect((error as Error).message).toMatch(/not valid JSON/);
    await expect(decoder.decode(body('S2'), job)).resolves.toMatchObject({ pieceStoreCodes: ['S2'] });
  });

  it('fails the pages of a thread that stops, instead of leaving them waiting', async () => {
    decoder = workerDecoder({ threads: 1, workerUrl: new URL('data:text/javascript,process.exit(3)') });
    await expect(decoder.decode(body('S1'), job)).rejects.toThrow(/a page decoder thread stopped: exit code 3/);
    await expect(decoder.decode(body('S2'), job)).rejects.toThrow(/a page decoder thread stopped/);
  });
});

describe('inlineDecoder', () => {
  it('decodes on the calling thread', async () => {
    await expect(inlineDecoder.decode(body('S1'), job)).resolves.toEqual(decodePage(body('S1'), job));
  });
});
