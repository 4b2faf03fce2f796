// A page decoder thread (see page-decoder.ts): receives page bodies, answers with decoded pages.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { MalformedBodyError } from '../fetch/http-client.js';
import { decodePage } from './page.js';
import type { DecodeReply, DecodeRequest } from './page-decoder.js';

if (parentPort === null) throw new Error('page-worker.js runs as a worker thread');
const port = parentPort;

/**
 * A page's parse tree is garbage once the page is encoded, but V8 lets a busy heap grow far past what is live before
 * it collects the old generation. Collecting after every few megabytes of bodies keeps this thread's memory in step
 * with the page size instead (tens of MB less at peak, for a few ms per collection). The flag only makes `gc`
 * reachable, as jest's leak detector does; nothing else about the process changes.
 */
const COLLECT_EVERY_BYTES = 8 * 2 ** 20;
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
let bytesSinceCollection = 0;

port.on('message', ({ id, body, job }: DecodeRequest) => {
  let reply: DecodeReply;
  try {
    const page = decodePage(body, job);
    reply = { id, ok: true, page };
    // The encoded output moves to the main thread without a copy (decodePage gives it a buffer of its own).
    port.postMessage(reply, [page.output.buffer as ArrayBuffer]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    reply = { id, ok: false, malformed: error instanceof MalformedBodyError, message };
    port.postMessage(reply);
  }
  bytesSinceCollection += body.byteLength;
  if (bytesSinceCollection >= COLLECT_EVERY_BYTES) {
    bytesSinceCollection = 0;
    collectGarbage();
  }
});
