import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_HELP } from '../../src/commands/sandbox-options.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ROOT } from '../helpers/cli.js';
import { codeBlocks } from '../helpers/markdown.js';
import { useSandbox } from '../helpers/vendor.js';
import { NOW } from './helpers.js';

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

/** One request with the headers given as they are (fetch would write its own Host), over a connection of its own. */
function send(
  sandbox: Sandbox,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  connectTo = '127.0.0.1',
): Promise<Answer> {
  const { port } = new URL(sandbox.url);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: connectTo, port, method, path, headers, agent: false }, (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => (text += chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, contentType: incoming.headers['content-type'], body: text }));
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Every admin route, with a body that would change the sandbox if it were taken. */
const ADMIN_ROUTES = [
  { method: 'GET', path: '/_sandbox/faults' },
  { method: 'POST', path: '/_sandbox/faults', body: '{"latencyMs": 600000}' },
  { method: 'GET', path: '/_sandbox/publishing' },
  { method: 'POST', path: '/_sandbox/publishing', body: '{"hidden": [{"day": "2026-11-21"}]}' },
  { method: 'GET', path: '/_sandbox/requests' },
] as const;

const sandbox = useSandbox({ stores: 2, zones: 2, days: 2, now: () => NOW });
let own: string;
beforeAll(() => {
  own = new URL(sandbox.url).host;
});

describe("the admin routes answer only requests addressed to the sandbox's own address", () => {
  it.each(ADMIN_ROUTES)('$method $path: 403 for a web page of another origin (a text/plain POST changes nothing)', async (route) => {
    for (const origin of ['http://evil.example', 'https://127.0.0.1:1', 'null', `https://${own}`]) {
      const headers = { host: own, origin, 'content-type': 'text/plain' };
      const answer = await send(sandbox, route.method, route.path, headers, 'body' in route ? route.body : undefined);
      expect(answer.status, origin).toBe(403);
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toEqual({
        detail: 'The sandbox admin endpoints refuse requests sent by a web page of another origin.',
      });
    }
    expect(sandbox.faults()).toEqual({});
    expect(sandbox.publishing()).toEqual({});
  });

  it.each(ADMIN_ROUTES)('$method $path: 403 for a Host that is not its address (DNS rebinding)', async (route) => {
    const { port } = new URL(sandbox.url);
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1:${Number(port) + 1}`, `127.0.0.1.evil.example:${port}`]) {
      const answer = await send(sandbox, route.method, route.path, { host }, 'body' in route ? route.body : undefined);
      expect(answer.status, host).toBe(403);
      expect(answer.contentType).toMatch(/^application\/json/);
      expect((JSON.parse(answer.body) as { detail: string }).detail).toMatch(
        /^The sandbox admin endpoints answer requests addressed to the sandbox itself only \(Host 127\.0\.0\.1:\d+, localhost:\d+, \[::1\]:\d+\)\.$/,
      );
    }
    expect(sandbox.faults()).toEqual({});
    expect(sandbox.publishing()).toEqual({});
  });

  it('answers its own names, with or without an Origin of its own, in any case', async () => {
    const { port } = new URL(sandbox.url);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      const variants: Record<string, string>[] = [
        { host },
        { host, origin: `http://${host}` },
        { host, origin: `http://localhost:${port}` },
      ];
      for (const headers of variants) {
        const answer = await send(sandbox, 'POST', '/_sandbox/faults', headers, '{"latencyMs": 1}');
        expect(answer.status, JSON.stringify(headers)).toBe(200);
      }
    }
    expect(sandbox.faults()).toEqual({ latencyMs: 1 });
  });

  it('keeps the refused requests in its log, unauthorized', async () => {
    await send(sandbox, 'GET', '/_sandbox/requests', { host: 'evil.example' });
    expect(sandbox.requests.at(-1)).toEqual({ method: 'GET', path: '/_sandbox/requests', query: {}, status: 403, authorized: false });
  });

  it('checks only the admin routes: the API answers any Host and Origin, as the vendor does', async () => {
    const headers = { host: 'api.vendor.example', origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' };
    const answer = await send(sandbox, 'POST', '/oauth2/token', headers, 'grant_type=client_credentials');
    // Refused for its missing credentials, as any client without them.
    expect(answer.status).toBe(401);
  });
});

describe('listening on every interface (--host 0.0.0.0)', () => {
  it('answers admin requests to its loopback names and to 0.0.0.0, refuses other names', async () => {
    const wide = await startSandbox({ host: '0.0.0.0', stores: 1, zones: 1, days: 1 });
    try {
      const { port } = new URL(wide.url);
      expect(wide.url).toBe(`http://0.0.0.0:${port}`);
      for (const host of [`0.0.0.0:${port}`, `127.0.0.1:${port}`, `localhost:${port}`]) {
        expect((await send(wide, 'GET', '/_sandbox/faults', { host }, undefined)).status, host).toBe(200);
      }
      for (const host of [`my-laptop.local:${port}`, `192.168.1.20:${port}`]) {
        expect((await send(wide, 'GET', '/_sandbox/faults', { host }, undefined)).status, host).toBe(403);
      }
    } finally {
      await wide.close();
    }
  });
});

describe("the docs' curl lines to the admin routes", () => {
  const run = promisify(execFile);
  const sources = {
    'docs/sandbox.md': codeBlocks(readFileSync(join(ROOT, 'docs/sandbox.md'), 'utf8')).join('\n'),
    'sandbox --help': SANDBOX_HELP,
  };
  const lines = Object.entries(sources).flatMap(([source, text]) =>
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^curl .*\/_sandbox\//.test(line))
      .map((line) => [source, line] as const),
  );

  it('are found', () => {
    expect(lines.map(([source]) => source)).toEqual(expect.arrayContaining(['docs/sandbox.md', 'sandbox --help']));
  });

  it.each(lines)('%s: %s answers 200', async (_source, line) => {
    const { port } = new URL(sandbox.url);
    // The line as written, on this sandbox's port, printing only the status.
    const command = line
      .replace(/(localhost|127\.0\.0\.1):8080/g, `$1:${port}`)
      .replace(/^curl /, "curl -s -o /dev/null -w '%{http_code}' ");
    const { stdout } = await run('sh', ['-c', command]);
    expect(stdout).toBe('200');
  });
});
