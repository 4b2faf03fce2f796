/**
 * Nothing secret out, honest exit codes, configuration mistakes: the BUILT binary against crafted answers from a
 * small loopback server (and a loopback proxy). Each case failed on the build before these rules.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, runCli, stopAllClis, type CliResult } from '../helpers/cli.js';
import { envelope, sendJson, startCraftedProxy, startCraftedServer, usersResult, type CraftedServer } from '../helpers/crafted-server.js';
import { dataFiles, listFiles, useTempDirs } from '../helpers/tmp.js';
import { importArgs as vendorImport } from '../helpers/vendor.js';

const CLIENT_ID = 'acme';
// A quote and a backslash: a JSON log spells them `\"` and `\\`.
const SECRET = 'Top"Se\\cret-42';
const BASIC = Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64');
/** Every spelling of the secret a log line could carry. */
const FORBIDDEN = [SECRET, JSON.stringify(SECRET).slice(1, -1), encodeURIComponent(SECRET), BASIC];
const DAY = '2026-03-10';
const NEXT_DAY = '2026-03-11';

let server: CraftedServer;
const tempDir = useTempDirs('honest-exits-');

// The secret as a flag: its quote and backslash must not reach an error line, however it is spelled there.
function importArgs(base: string, out: string, ...extra: string[]): string[] {
  const vendor = { url: base, clientId: CLIENT_ID };
  return vendorImport(vendor, 'unique-users', out, '--client-secret', SECRET, '--date', DAY, '--retries', '1', ...extra);
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

function expectNoSecret(result: CliResult): void {
  for (const spelling of FORBIDDEN) {
    expect(result.stderr).not.toContain(spelling);
    expect(result.stdout).not.toContain(spelling);
  }
}

/** The page the importer asked for (`page=N` on links we hand out; the first page has none). */
function pageOf(url: string | undefined): number {
  return Number(new URL(url ?? '/', 'http://x').searchParams.get('page') ?? '1');
}

beforeAll(async () => {
  server = await startCraftedServer();
});

afterAll(async () => {
  await stopAllClis();
  await server?.close();
});

describe.concurrent('nothing secret out', () => {
  it('a mistyped flag is named without its value, on one line', async () => {
    for (const typo of ['--client-secrett=TopSecret-42', '-xTopSecret-42']) {
      const result = await runCli(['unique-users', '--base-url', server.url, typo]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).not.toContain('TopSecret-42');
      expect(lines(result.stderr)).toEqual([`error: unknown option '${typo.startsWith('--') ? '--client-secrett' : '-x'}' (see --help)`]);
    }
  });

  it.for(['text', 'json'] as const)(
    'a gateway that echoes the Basic header and the secret in a 400: masked in every %s line (exit 4)',
    async (format, context) => {
      const base = server.route(`echo-${format}`, (request, response) =>
        sendJson(response, 400, JSON.stringify({ detail: `bad header ${request.headers.authorization ?? ''}; secret ${SECRET}` })),
      );
      const result = await runCli(importArgs(base, await tempDir(context), '--log-format', format));
      expect(result.code, result.stderr).toBe(4);
      expectNoSecret(result);
      const stderr = lines(result.stderr);
      const messages = format === 'json' ? stderr.map((line) => (JSON.parse(line) as { msg: string }).msg) : stderr;
      expect(messages.find((message) => message.includes('HTTP 400'))).toContain('bad header Basic ***; secret ***');
    },
  );

  it('the token command masks an auth server echoing the Basic header (exit 3)', async () => {
    const base = server.route('token-echo', (request, response) =>
      sendJson(
        response,
        400,
        JSON.stringify({ error: 'invalid_client', error_description: `bad header ${request.headers.authorization ?? ''}` }),
      ),
    );
    const result = await runCli(['token', '--auth-url', base, '--client-id', CLIENT_ID, '--client-secret', SECRET, '-v']);
    expect(result.code, result.stderr).toBe(3);
    expectNoSecret(result);
    expect(result.stderr).toContain('bad header Basic ***');
  });
});

describe.concurrent('exit codes that tell the truth', () => {
  it('a closed stdout after a failed unit keeps the failure’s exit code, not 0', async () => {
    // Day one fails at once (404 on the first page: exit 4); day two is big enough to fill the pipe.
    const big = envelope(Array.from({ length: 1000 }, (_, index) => usersResult(`S${String(index).padStart(4, '0')}`, NEXT_DAY, 20)));
    const base = server.route('closed-stdout', (request, response) => {
      const from = new URL(request.url ?? '/', 'http://x').searchParams.get('datetime_gte') ?? '';
      if (from.startsWith(DAY)) sendJson(response, 404, '{"detail":"Not found."}');
      else sendJson(response, 200, big);
    });
    const child = spawn(
      process.execPath,
      [
        BIN,
        ...vendorImport(
          { url: base, clientId: CLIENT_ID },
          'unique-users',
          '-',
          '--client-secret',
          SECRET,
          '--from',
          DAY,
          '--to',
          NEXT_DAY,
          '--retries',
          '0',
        ),
      ],
      {
        env: cliEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // `| head -1`: read one chunk, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
    expect(stderr).toContain(`unique-users ${DAY} page 1: GET`);
    expect(code, stderr).toBe(4);
  });

  it.for([
    ['always', 6],
    ['once', 0],
  ] as const)('a 404 on page 2 (the set shrank) %s: the unit is fetched again (exit %i)', async ([when, exitCode], context) => {
    const name = `page-gone-${when}`;
    let gone = 0;
    const base = server.route(name, (request, response) => {
      if (pageOf(request.url) === 1) {
        const next = `${base}/api/bi/area-metrics/unique-users/?page=2`;
        sendJson(response, 200, envelope([usersResult('S1', DAY), usersResult('S2', DAY)], { count: 4, next }));
      } else if (when === 'always' || gone++ === 0) {
        sendJson(response, 404, '{"detail":"Invalid page."}');
      } else {
        sendJson(response, 200, envelope([usersResult('S3', DAY), usersResult('S4', DAY)], { count: 4 }));
      }
    });
    const out = await tempDir(context);
    const result = await runCli(importArgs(base, out));
    expect(result.code, result.stderr).toBe(exitCode);
    expect(result.stderr).toContain('page 2 is gone (HTTP 404)');
    if (when === 'always') {
      expect(server.calls(name)).toHaveLength(6);
      expect(result.stderr).toMatch(/incomplete data after 3 fetches/);
      expect(await dataFiles(out)).toEqual([]);
    } else {
      expect(server.calls(name)).toHaveLength(4);
      const csv = lines(await readFile(join(out, 'unique-users', `${DAY}.csv`), 'utf8'));
      expect(csv.slice(1).map((row) => row.split(',')[0])).toEqual(['S1', 'S1', 'S2', 'S2', 'S3', 'S3', 'S4', 'S4']);
    }
  });
});

describe.concurrent('configuration mistakes are usage errors, not bugs', () => {
  it('HTTP_PROXY=127.0.0.1:<port> (no scheme) is a proxy, as curl reads it', async (context) => {
    const proxy = await startCraftedProxy({ kind: 'tunnel' });
    context.onTestFinished(() => proxy.close());
    const base = server.route('via-proxy', (_request, response) => sendJson(response, 200, envelope([usersResult('S1', DAY)])));
    const out = await tempDir(context);
    const result = await runCli(importArgs(base, out), { env: { HTTP_PROXY: proxy.hostPort } });
    expect(result.code, result.stderr).toBe(0);
    expect(proxy.connects).toEqual([new URL(server.url).host]);
    expect(await listFiles(out)).toContain(`unique-users/${DAY}.csv`);
  });

  it('a proxy variable that is no URL is exit 2 naming the variable, not its value', async (context) => {
    const out = await tempDir(context);
    const result = await runCli(importArgs(server.url, out), { env: { HTTPS_PROXY: 'http://:8765', HTTP_PROXY: undefined } });
    expect(result.code, result.stderr).toBe(2);
    // The run's first line names it (then the warning about the secret given as a flag); the one error line follows.
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^area-metrics \S+ unique-users --date /),
      expect.stringMatching(/^warn: --client-secret puts the secret on the command line/),
      expect.stringMatching(/^error: HTTPS_PROXY is not a proxy URL; use e\.g\. /),
    ]);
    expect(result.stderr).not.toContain(':8765');
  });

  it('a proxy answering 407 is exit 4 "proxy authentication required", asked once', async (context) => {
    const proxy = await startCraftedProxy({ kind: 'refuse', status: 407 });
    context.onTestFinished(() => proxy.close());
    const out = await tempDir(context);
    const result = await runCli(importArgs(`${server.url}/never`, out, '--retries', '3'), {
      env: { HTTP_PROXY: `http://${proxy.hostPort}` },
    });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain('proxy authentication required (HTTP 407 from the proxy)');
    expect(result.stderr).not.toContain('retry');
    expect(proxy.connects).toHaveLength(1);
  });

  it('--timeout 1.0005 is a timeout of 1001 ms, not a failure of every unit', async (context) => {
    const base = server.route('fraction', (_request, response) => sendJson(response, 200, envelope([usersResult('S1', DAY)])));
    const out = await tempDir(context);
    const result = await runCli(importArgs(base, out, '--timeout', '1.0005'));
    expect(result.code, result.stderr).toBe(0);
    expect(await listFiles(out)).toContain(`unique-users/${DAY}.csv`);
  });

  it('a 240-character --store is written under its SHA-256, not exit 1 ENAMETOOLONG', async (context) => {
    const code = 'S'.repeat(240);
    const base = server.route('long-store', (_request, response) => sendJson(response, 200, envelope([usersResult(code, DAY)])));
    const out = await tempDir(context);
    const result = await runCli(importArgs(base, out, '--store', code));
    expect(result.code, result.stderr).toBe(0);
    const file = `unique-users/${DAY}.store-sha256-${createHash('sha256').update(code).digest('hex')}.csv`;
    expect(await listFiles(out)).toEqual(['.area-metrics-state.json', file]);
    expect(
      lines(await readFile(join(out, file), 'utf8'))
        .slice(1)
        .map((row) => row.split(',')[0]),
    ).toEqual([code, code]);
  });

  it("-o '' is exit 2 and writes nothing into the current folder", async (context) => {
    const cwd = await tempDir(context);
    const base = server.route('empty-output', (_request, response) => sendJson(response, 200, envelope([usersResult('S1', DAY)])));
    // The current folder is a process's.
    const result = await runCli(importArgs(base, ''), { cwd, process: true });
    expect(result.code, result.stderr).toBe(2);
    expect(lines(result.stderr)).toEqual(['error: -o/--output needs a folder, s3://bucket/prefix, postgresql://..., or - for stdout']);
    expect(await listFiles(cwd)).toEqual([]);
    expect(server.calls('empty-output')).toHaveLength(0);
  });
});

describe.concurrent("commander's own errors", () => {
  it('an unknown command and its "did you mean" are one line', async () => {
    const result = await runCli(['trafic']);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual(["error: unknown command 'trafic'; did you mean traffic? (see --help)"]);
  });

  it.each([
    [['--log-format', 'json', '--bogus'], "unknown option '--bogus'"],
    [['--log-format=json', '--format', 'xml'], "argument 'xml' is invalid"],
    [['--log-format', 'json', '--client-secrett', 'x'], "unknown option '--client-secrett'; did you mean --client-secret?"],
  ])('with --log-format json every stderr line is JSON: %j', async (args, message) => {
    const result = await runCli(['unique-users', '--base-url', server.url, ...args]);
    expect(result.code, result.stderr).toBe(2);
    const [line, ...more] = lines(result.stderr);
    expect(more).toEqual([]);
    const parsed = JSON.parse(line ?? '') as { level: string; msg: string };
    expect(parsed.level).toBe('error');
    expect(parsed.msg).toContain(message);
  });
});
