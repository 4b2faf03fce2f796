import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';
import type { CommandContext } from '../../src/commands/context.js';
import { makeJwt } from '../auth/make-jwt.js';

const SECRET = 'Sup3r-Secret-Value';
const BASIC = `Basic ${Buffer.from(`my-client:${SECRET}`).toString('base64')}`;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (request: Seen, response: ServerResponse) => void;

/** A real loopback server whose answer each test chooses; it records every request it gets. */
let server: Server;
let baseUrl: string;
let handler: Handler;
const seen: Seen[] = [];

function json(status: number, body: unknown, type = 'application/json'): Handler {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': type });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

const now = (): number => Math.floor(Date.now() / 1000);
const goodJwt = (): string =>
  makeJwt({
    iss: 'https://auth.test',
    sub: 'my-client',
    aud: 'metrics',
    scope: 'read',
    client_id: 'my-client',
    iat: now(),
    exp: now() + 3600,
  });

let tempDir: string;

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'token-test-'));
  await writeFile(join(tempDir, 'secret'), `${SECRET}\n`);
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      seen.push(entry);
      handler(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(tempDir, { recursive: true, force: true });
});

afterEach(() => {
  seen.length = 0;
  handler = json(500, { error: 'no handler set' });
});

function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return Object.assign(stream, { text: () => chunks.join('') });
}

async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const context: CommandContext = {
    stdout,
    stderr,
    env,
    signal: new AbortController().signal,
  };
  const code = await runCli(['token', ...args], context);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The secret from a file: a secret given as a flag is warned about (tested on its own). */
const creds = (): string[] => ['--auth-url', baseUrl, '--client-id', 'my-client', '--client-secret-file', join(tempDir, 'secret')];

function expectNoSecret(result: { stdout: string; stderr: string }): void {
  for (const text of [result.stdout, result.stderr]) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(BASIC.slice('Basic '.length));
  }
}

describe('token against an auth server', () => {
  it('sends the client-credentials request and prints the human report, token last', async () => {
    const token = goodJwt();
    handler = json(200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
    const result = await run([...creds(), '--scope', 'read write']);
    expect(result.code).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/oauth2/token', body: 'grant_type=client_credentials&scope=read+write' });
    expect(seen[0]?.headers.authorization).toBe(BASIC);
    expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(result.stdout).toContain('token type:  Bearer');
    expect(result.stdout).toContain('expires_in:  3600 s');
    expect(result.stdout).toMatch(/expires at: +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(local /);
    expect(result.stdout).toContain('signature was NOT verified');
    expect(result.stdout).toMatch(/alg +HS256/);
    expect(result.stdout).toMatch(/client_id +my-client/);
    expect(result.stdout).toMatch(/exp +\d+ = \d{4}-\d\d-\d\dT/);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(token);
    expect(result.stderr).toBe('');
    expectNoSecret(result);
  });

  it('--raw prints only the token', async () => {
    const token = goodJwt();
    handler = json(200, { access_token: token, expires_in: 3600, token_type: 'Bearer' });
    const result = await run([...creds(), '--raw']);
    expect(result).toMatchObject({ code: 0, stdout: `${token}\n`, stderr: '' });
  });

  it('--json prints the server JSON plus claims and header', async () => {
    const token = goodJwt();
    handler = json(200, { access_token: token, expires_in: 3600, token_type: 'Bearer', vendor_field: 'x' });
    const result = await run([...creds(), '--json']);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ access_token: token, expires_in: 3600, token_type: 'Bearer', vendor_field: 'x' });
    expect(body.header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(body.claims).toMatchObject({ sub: 'my-client', client_id: 'my-client' });
  });

  it('--verbose says what it does but never the secret', async () => {
    handler = json(200, { access_token: goodJwt(), expires_in: 3600, token_type: 'Bearer' });
    const result = await run([...creds(), '-v']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`debug: POST ${baseUrl}/oauth2/token as client "my-client"`);
    expect(result.stderr).toContain(`client secret from the file ${join(tempDir, 'secret')}`);
    expectNoSecret(result);
  });

  it('warns once about a secret given as --client-secret (visible in the process list), not about the env var', async () => {
    handler = json(200, { access_token: goodJwt(), expires_in: 3600, token_type: 'Bearer' });
    const flag = await run(['--auth-url', baseUrl, '--client-id', 'my-client', '--client-secret', SECRET]);
    expect(flag.code).toBe(0);
    expect(flag.stderr.split('\n').filter((line) => line.includes('--client-secret'))).toEqual([
      expect.stringMatching(/^warn: --client-secret puts the secret on the command line, where every user of this machine can read it/),
    ]);
    expectNoSecret(flag);
    const env = await run(['--auth-url', baseUrl, '--client-id', 'my-client'], { AREA_METRICS_CLIENT_SECRET: SECRET });
    expect(env).toMatchObject({ code: 0, stderr: '' });
  });

  it('takes settings from env vars, lets flags beat them, and treats empty env vars as unset', async () => {
    handler = json(200, { access_token: goodJwt(), expires_in: 3600, token_type: 'Bearer' });
    const env = {
      AREA_METRICS_AUTH_URL: `${baseUrl}/`,
      AREA_METRICS_CLIENT_ID: 'env-client',
      AREA_METRICS_CLIENT_SECRET: 'env-secret',
    };
    expect((await run([], env)).code).toBe(0);
    expect(seen.at(-1)?.headers.authorization).toBe(`Basic ${Buffer.from('env-client:env-secret').toString('base64')}`);
    expect((await run(['--client-id', 'my-client', '--client-secret', SECRET], env)).code).toBe(0);
    expect(seen.at(-1)?.headers.authorization).toBe(BASIC);
    const empty = await run([], { ...env, AREA_METRICS_CLIENT_ID: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--client-id');
  });

  it('reads the secret from a file, trimming the trailing newline', async () => {
    handler = json(200, { access_token: goodJwt(), expires_in: 3600, token_type: 'Bearer' });
    const file = join(tempDir, 'secret');
    await writeFile(file, `${SECRET}\n`);
    expect((await run(['--auth-url', baseUrl, '--client-id', 'my-client', '--client-secret-file', file])).code).toBe(0);
    expect(seen.at(-1)?.headers.authorization).toBe(BASIC);
    expect((await run(['--auth-url', baseUrl, '--client-id', 'my-client'], { AREA_METRICS_CLIENT_SECRET_FILE: file })).code).toBe(0);
    expect(seen.at(-1)?.headers.authorization).toBe(BASIC);
  });

  it('names an unreadable secret file (exit 2) without its content', async () => {
    const missing = join(tempDir, 'nope');
    const result = await run(['--auth-url', baseUrl, '--client-id', 'my-client', '--client-secret-file', missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(missing);
    expect(result.stderr).toContain('ENOENT');
    expect(seen).toHaveLength(0);
    // A directory is unreadable as a file too.
    const directory = await run(['--auth-url', baseUrl, '--client-id', 'my-client', '--client-secret-file', tempDir]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toContain(tempDir);
  });

  it.each([
    [['--client-id', 'a', '--client-secret', 's'], '--auth-url', 'AREA_METRICS_AUTH_URL'],
    [['--auth-url', 'http://x', '--client-secret', 's'], '--client-id', 'AREA_METRICS_CLIENT_ID'],
    [['--auth-url', 'http://x', '--client-id', 'a'], '--client-secret', 'AREA_METRICS_CLIENT_SECRET'],
  ])('exits 2 naming the flag and env var when one is missing (%j)', async (args, flag, envVar) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(flag);
    expect(result.stderr).toContain(envVar);
  });

  it("without an auth URL but with the metrics API's, says that it wants the auth server's", async () => {
    const result = await run(['--client-id', 'a'], { AREA_METRICS_BASE_URL: baseUrl, AREA_METRICS_CLIENT_SECRET: 's3cret-value' });
    expect(result.code).toBe(2);
    // Off a terminal, the line starts with its time, like every log line.
    expect(result.stderr.replace(/^\S+Z /, '')).toBe(
      'error: missing auth URL: pass --auth-url or set AREA_METRICS_AUTH_URL (AREA_METRICS_BASE_URL is the metrics API; tokens come from the auth server)\n',
    );
    expect(seen).toHaveLength(0);
  });

  it.each([
    [['--client-secret', 'x', '--client-secret-file', '/tmp/x'], 'cannot be combined'],
    [['--raw', '--json'], '--raw and --json'],
    [['--app', 'com.acme'], '--app needs --broker'],
    [['--timeout', 'soon'], '--timeout'],
    [['--timeout', '0.0001'], '--timeout "0.0001" must be a number of seconds from 0.001 to 3600'],
    [['--retries', '-1'], '--retries'],
  ])('rejects %j as a usage error', async (args, message) => {
    const result = await run(['--auth-url', baseUrl, '--client-id', 'a', ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(seen).toHaveLength(0);
  });

  it('refuses secret and secret file both set in the environment', async () => {
    const result = await run(['--auth-url', baseUrl, '--client-id', 'a'], {
      AREA_METRICS_CLIENT_SECRET: 'x',
      AREA_METRICS_CLIENT_SECRET_FILE: '/tmp/x',
    });
    expect(result.code).toBe(2);
  });

  describe('warnings on stderr, still exit 0', () => {
    it('a token expiring within 60 s', async () => {
      handler = json(200, { access_token: makeJwt({ exp: now() + 30 }), expires_in: 30, token_type: 'Bearer' });
      const result = await run(creds());
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(/warn: the token expires within 60 s \(in \d+ s/);
    });

    it('exp and expires_in disagreeing by more than 60 s', async () => {
      handler = json(200, { access_token: makeJwt({ exp: now() + 600 }), expires_in: 3600, token_type: 'Bearer' });
      const result = await run(creds());
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('disagree by');
      expect(result.stdout).toContain('from the exp claim');
    });

    it('no warning when they agree within 60 s', async () => {
      handler = json(200, { access_token: makeJwt({ exp: now() + 3630 }), expires_in: 3600, token_type: 'Bearer' });
      expect((await run(creds())).stderr).toBe('');
    });

    it('a token_type other than Bearer', async () => {
      handler = json(200, { access_token: goodJwt(), expires_in: 3600, token_type: 'mac' });
      expect((await run(creds())).stderr).toContain('token_type is "mac", not Bearer');
    });

    it('an opaque token is shown as opaque', async () => {
      handler = json(200, { access_token: 'opaque-abc', expires_in: 3600, token_type: 'bearer' });
      const result = await run(creds());
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('not a JWT');
      expect(result.stdout).toContain('opaque token');
      expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('opaque-abc');
      const asJson = await run([...creds(), '--json']);
      expect(JSON.parse(asJson.stdout)).toMatchObject({ access_token: 'opaque-abc', header: null, claims: null });
    });
  });

  describe('failures', () => {
    it.each([400, 401])('%i invalid_client → exit 3 with error and error_description', async (status) => {
      handler = json(status, { error: 'invalid_client', error_description: 'Bad credentials' });
      const result = await run(creds());
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('invalid_client (Bad credentials)');
      expect(result.stdout).toBe('');
      expectNoSecret(result);
    });

    it('5xx → exit 4 naming the URL', async () => {
      handler = json(503, { error: 'temporarily_unavailable' });
      const result = await run(creds());
      expect(result.code).toBe(4);
      expect(result.stderr).toContain(`POST ${baseUrl}/oauth2/token: HTTP 503`);
      expect(seen).toHaveLength(1);
    });

    it('--retries retries a 5xx', async () => {
      handler = json(502, {});
      const result = await run([...creds(), '--retries', '1']);
      expect(result.code).toBe(4);
      expect(seen).toHaveLength(2);
    });

    it('connection refused → exit 4 naming the URL', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const result = await run(['--auth-url', `http://127.0.0.1:${port}`, '--client-id', 'my-client'], {
        AREA_METRICS_CLIENT_SECRET: SECRET,
      });
      expect(result.code).toBe(4);
      expect(result.stderr).toContain(`http://127.0.0.1:${port}/oauth2/token`);
      expect(result.stderr).toContain('ECONNREFUSED');
      // One hint, the auth server's, not the HTTP client's generic one as well.
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(/; check the auth URL and that the auth server is up and reachable$/),
      ]);
      expect(result.stderr).not.toContain('try again later');
      expectNoSecret(result);
    });

    it('a timeout → exit 4', async () => {
      handler = () => {}; // never answers; closeAllConnections in afterAll ends it
      const result = await run([...creds(), '--timeout', '0.3']);
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('timed out');
    });

    it.each([
      ['no access_token', { token_type: 'Bearer', expires_in: 60 }, 'application/json'],
      ['a body that is not JSON', '<html>login</html>', 'text/html'],
    ])('a 200 with %s → exit 5', async (_name, body, type) => {
      handler = json(200, body, type);
      const result = await run(creds());
      expect(result.code).toBe(5);
      expect(result.stdout).toBe('');
    });
  });
});

describe('token --broker', () => {
  const problem = (status: number, detail: string): Handler =>
    json(
      status,
      { type: 'about:blank', title: status === 400 ? 'Bad Request' : 'Unauthorized', status, detail },
      'application/problem+json',
    );

  it('asks the broker for the application and shows the token, without client credentials', async () => {
    const token = goodJwt();
    handler = json(200, { access_token: token, expires_in: 3590 });
    const result = await run(['--broker', `${baseUrl}/`, '--app', 'com.acme.shop'], { AREA_METRICS_CLIENT_SECRET: SECRET });
    expect(result.code).toBe(0);
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/gatekeeper-token?application_package=com.acme.shop' });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(result.stdout).toContain('expires_in:  3590 s');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(token);
    // A broker sends no token_type by design: no warning for that.
    expect(result.stderr).toBe('');
  });

  it.each([
    [400, 'unknown application_package'],
    [401, 'no credentials configured for platform ios'],
  ])('a %i problem → exit 3 showing status and detail', async (status, detail) => {
    handler = problem(status, detail);
    const result = await run(['--broker', baseUrl, '--app', 'com.acme.unknown']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`HTTP ${status}`);
    expect(result.stderr).toContain(detail);
  });

  it.each([502, 503])('a %i problem → exit 4 showing status and detail', async (status) => {
    handler = json(status, { title: 'Bad Gateway', status, detail: 'auth server said no' }, 'application/problem+json');
    const result = await run(['--broker', baseUrl, '--app', 'com.acme.shop']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`HTTP ${status}`);
    expect(result.stderr).toContain('auth server said no');
  });

  it('a 200 without access_token → exit 5', async () => {
    handler = json(200, { expires_in: 10 });
    expect((await run(['--broker', baseUrl, '--app', 'com.acme.shop'])).code).toBe(5);
  });

  const ATTESTATION = 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiIxOjEyMzphbmRyb2lkOmFiYyJ9.c2lnbmF0dXJlLW9mLWFwcC1jaGVjaw';

  it('sends an attestation token from AREA_METRICS_ATTESTATION_TOKEN in X-Firebase-AppCheck, saying nothing of it', async () => {
    handler = json(200, { access_token: goodJwt(), expires_in: 3590 });
    const result = await run(['--broker', baseUrl, '--app', 'com.acme.shop', '--verbose'], { AREA_METRICS_ATTESTATION_TOKEN: ATTESTATION });
    expect(result.code).toBe(0);
    expect(seen[0]?.headers['x-firebase-appcheck']).toBe(ATTESTATION);
    expect(result.stderr).toContain('with an attestation token in X-Firebase-AppCheck');
    expect(result.stderr).not.toMatch(/command line/);
    expect(result.stderr).not.toContain(ATTESTATION);
  });

  it('warns once about --attestation-token on the command line, and sends it in the header asked for', async () => {
    handler = json(200, { access_token: goodJwt(), expires_in: 3590 });
    const result = await run([
      '--broker',
      baseUrl,
      '--app',
      'com.acme.shop',
      '--attestation-token',
      ATTESTATION,
      '--attestation-header',
      'X-App-Attestation',
    ]);
    expect(result.code).toBe(0);
    expect(seen[0]?.headers['x-app-attestation']).toBe(ATTESTATION);
    expect(result.stderr.match(/--attestation-token puts the token on the command line/g)).toHaveLength(1);
    expect(result.stderr).not.toContain(ATTESTATION);
  });

  it('exits 3 when the broker refuses the attestation (403), showing the problem, never the token', async () => {
    handler = json(
      403,
      {
        type: 'urn:area-metrics:broker:problem:attestation-other-app',
        title: 'The app attestation is for another application',
        status: 403,
        detail: 'issued to another application',
      },
      'application/problem+json',
    );
    const result = await run(['--broker', baseUrl, '--app', 'com.acme.shop'], { AREA_METRICS_ATTESTATION_TOKEN: ATTESTATION });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('HTTP 403');
    expect(result.stderr).toContain('for another application');
    expect(result.stderr).not.toContain(ATTESTATION);
  });

  it('masks the attestation token where the broker echoes it back, in the retry warning and the error line', async () => {
    // A broker (or a gateway before it) that quotes what it was sent, raw and URL-encoded, past where the command
    // cuts a detail (200 characters in a retry warning, 300 in the error line): first in a 503 (retried, so a
    // warning line tells of it), then in a 403 (the error line).
    const echoed = `${ATTESTATION}+/=`;
    handler = (request, response) => {
      const status = seen.length === 1 ? 503 : 403;
      const token = String(request.headers['x-firebase-appcheck']);
      const detail = `${'word '.repeat(30)}token ${token} (${encodeURIComponent(token)}) is not valid`;
      response.writeHead(status, { 'content-type': 'application/problem+json', 'retry-after': '0' });
      response.end(JSON.stringify({ type: 'about:blank', title: 'Refused', status, detail }));
    };
    const result = await run(['--broker', baseUrl, '--app', 'com.acme.shop', '--retries', '1'], { AREA_METRICS_ATTESTATION_TOKEN: echoed });
    expect(seen.map((request) => request.headers['x-firebase-appcheck'])).toEqual([echoed, echoed]);
    expect(result.code).toBe(3);
    const [warning, error, ...rest] = result.stderr.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(warning).toMatch(/HTTP 503 \(word word .*token…\); retry 1\/1/);
    expect(error).toMatch(/HTTP 403 \(Refused: word word .*token \*\*\*…\)/);
    // Not the token, nor any start of it: a cut in the middle of it would leave a part the redaction cannot know.
    expect(result.stderr).not.toContain(ATTESTATION.slice(0, 12));
  });

  it('refuses --attestation-token without --broker', async () => {
    const result = await run([...creds(), '--attestation-token', ATTESTATION]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--attestation-token needs --broker');
    expect(result.stderr).not.toContain(ATTESTATION);
    expect(seen).toHaveLength(0);
  });

  it('refuses client-credential flags and a missing --app', async () => {
    expect((await run(['--broker', baseUrl, '--app', 'x', '--client-id', 'a'])).stderr).toContain(
      '--client-id cannot be used with --broker',
    );
    expect((await run(['--broker', baseUrl])).code).toBe(2);
    expect(seen).toHaveLength(0);
  });
});
