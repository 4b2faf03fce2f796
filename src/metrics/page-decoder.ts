import { Worker } from 'node:worker_threads';
import { MalformedBodyError } from '../fetch/http-client.js';
import { decodePage, type DecodedPage, type PageJob } from './page.js';

/**
 * Turns page bodies into decoded pages. Parsing, checking and encoding are most of an import's CPU time, so they
 * run on worker threads while the main thread keeps requests in flight and writes files; `inlineDecoder` does the
 * same work on the calling thread (`--threads 0`, and the unit tests).
 */
export interface PageDecoder {
  decode(body: Uint8Array, job: PageJob): Promise<DecodedPage>;
  close(): Promise<void>;
}

export const inlineDecoder: PageDecoder = {
  decode: async (body, job) => decodePage(body, job),
  close: async () => {},
};

/** Messages between the pool and `page-worker.ts`. */
export interface DecodeRequest {
  readonly id: number;
  readonly body: Uint8Array;
  readonly job: PageJob;
}

export type DecodeReply =
  | { readonly id: number; readonly ok: true; readonly page: DecodedPage }
  | { readonly id: number; readonly ok: false; readonly malformed: boolean; readonly message: string };

interface Pending {
  readonly resolve: (page: DecodedPage) => void;
  readonly reject: (error: Error) => void;
}

class DecoderThread {
  readonly pending = new Map<number, Pending>();
  private failure: Error | undefined;

  constructor(readonly worker: Worker) {
    worker.on('message', (reply: DecodeReply) => {
      const pending = this.pending.get(reply.id);
      if (pending === undefined) return;
      this.pending.delete(reply.id);
      if (reply.ok) pending.resolve(reply.page);
      else pending.reject(reply.malformed ? new MalformedBodyError(reply.message) : new Error(reply.message));
    });
    // A thread that dies (out of memory, a bug) fails the pages it held and takes no more: nothing waits forever.
    const fail = (error: Error): void => {
      this.failure ??= new Error(`a page decoder thread stopped: ${error.message}`);
      for (const pending of this.pending.values()) pending.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  }

  decode(id: number, body: Uint8Array, job: PageJob): Promise<DecodedPage> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // The body's memory moves to the thread instead of being copied; this side no longer needs it.
      const transfer = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? [body.buffer as ArrayBuffer] : [];
      this.worker.postMessage({ id, body, job } satisfies DecodeRequest, transfer);
    });
  }
}

export interface WorkerDecoderOptions {
  readonly threads: number;
  /** The worker's module; the compiled `page-worker.js` beside this file unless a test says otherwise. */
  readonly workerUrl?: URL;
}

/**
 * A decoder thread's young generation. Nearly everything a page allocates dies with the page, so a large nursery
 * only holds more garbage: 12 MB instead of V8's default (up to 48 MB) took 40 to 50 MB off the peak RSS of a 7-day
 * NDJSON import, at no measurable cost in time (docs/bench.md).
 */
const YOUNG_GENERATION_MB = 12;

/** A fixed pool of decoder threads; each page goes to the thread with the fewest pages waiting. */
export function workerDecoder(options: WorkerDecoderOptions): PageDecoder {
  const url = options.workerUrl ?? new URL('./page-worker.js', import.meta.url);
  const threads = Array.from(
    { length: Math.max(1, options.threads) },
    () => new DecoderThread(new Worker(url, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } })),
  );
  let nextId = 0;
  return {
    decode(body, job) {
      const idlest = threads.reduce((best, thread) => (thread.pending.size < best.pending.size ? thread : best));
      return idlest.decode(nextId++, body, job);
    },
    async close() {
      await Promise.all(threads.map((thread) => thread.worker.terminate()));
    },
  };
}
