// A page decoder thread (see page-decoder.ts): receives page bodies, answers with decoded pages.
import { parentPort } from 'node:worker_threads';
import { MalformedBodyError } from '../fetch/http-client.js';
import { decodePage } from './page.js';
import type { DecodeReply, DecodeRequest } from './page-decoder.js';

if (parentPort === null) throw new Error('page-worker.js runs as a worker thread');
const port = parentPort;

port.on('message', ({ id, body, job }: DecodeRequest) => {
  let reply: DecodeReply;
  try {
    const page = decodePage(body, job);
    reply = { id, ok: true, page };
    // The encoded output moves to the main thread without a copy (decodePage gives it a buffer of its own).
    port.postMessage(reply, [page.output.buffer as ArrayBuffer]);
    return;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    reply = { id, ok: false, malformed: error instanceof MalformedBodyError, message };
  }
  port.postMessage(reply);
});
