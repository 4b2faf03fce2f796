#!/usr/bin/env node
// The reference for the broker benchmark: a bare node:http server answering a constant 200-byte JSON body, the
// most a Node process can serve on this machine. Prints `bare listening on http://...` first, like the broker.
import { createServer } from 'node:http';

const token = 'x'.repeat(200 - '{"access_token":"","expires_in":3540}'.length);
const body = Buffer.from(JSON.stringify({ access_token: token, expires_in: 3540 }));
if (body.length !== 200) throw new Error(`body is ${body.length} bytes, not 200`);

const server = createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, 'cache-control': 'no-store' });
  response.end(body);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`bare listening on http://127.0.0.1:${server.address().port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
