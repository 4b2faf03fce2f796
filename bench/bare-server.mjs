#!/usr/bin/env node
// The references for the broker benchmark: a bare node:http server answering a constant JSON body of `--bytes N`
// bytes (default 200; the benchmark passes the length of the broker's token answer, so both send as many bytes), the
// most a Node process can serve on this machine, or with --fastify a minimal fastify route (no logger, no hooks)
// answering the same body, the most a fastify-based server can. Prints `bare listening on http://...` first, like
// the broker.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { bytes: { type: 'string', default: '200' }, fastify: { type: 'boolean', default: false } } });
const bytes = Number(values.bytes);
const token = 'x'.repeat(bytes - '{"access_token":"","expires_in":3540}'.length);
const body = Buffer.from(JSON.stringify({ access_token: token, expires_in: 3540 }));
if (body.length !== bytes) throw new Error(`body is ${body.length} bytes, not ${bytes}`);

const announce = (/** @type {number} */ port) => process.stdout.write(`bare listening on http://127.0.0.1:${port}\n`);
let stop;
if (values.fastify) {
  const { fastify } = await import('fastify'); // only here: the bare server loads nothing but node:http
  const app = fastify({ logger: false });
  app.get('/', (_request, reply) => {
    reply.header('content-type', 'application/json').header('cache-control', 'no-store').send(body);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  announce(/** @type {import('node:net').AddressInfo} */ (app.server.address()).port);
  stop = () => app.close().then(() => process.exit(0));
} else {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, 'cache-control': 'no-store' });
    response.end(body);
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1', () => announce(/** @type {import('node:net').AddressInfo} */ (server.address()).port));
  stop = () => server.close(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
