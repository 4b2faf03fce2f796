import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { useSandbox } from '../helpers/vendor.js';

const runBinary = (args: string[], env: Record<string, string> = {}) => runCli(['token', ...args], { env });

/** Proves the token really is the sandbox's: its HS256 signature checks out with the sandbox's key. */
function hs256Valid(token: string, key: string): boolean {
  const [header, claims, signature] = token.split('.');
  const expected = createHmac('sha256', key).update(`${header}.${claims}`).digest('base64url');
  return signature === expected;
}

let tempDir: string;

const sandbox = useSandbox({ clientId: 'e2e-client', tokenTtlSeconds: 900 });

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'token-e2e-'));
});

afterAll(async () => {
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
});

const creds = (): string[] => ['--auth-url', sandbox.url, '--client-id', sandbox.clientId];

describe('area-metrics token (built binary) against the sandbox', () => {
  it('gets a real token and shows it decoded, without the secret anywhere', async () => {
    const before = sandbox.tokenRequests();
    const result = await runBinary([...creds(), '-v'], { AREA_METRICS_CLIENT_SECRET: sandbox.clientSecret });
    expect(result.code).toBe(0);
    expect(sandbox.tokenRequests()).toBe(before + 1);
    const token = result.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(hs256Valid(token, sandbox.tokenSigningKey)).toBe(true);
    expect(result.stdout).toContain('token type:  Bearer');
    expect(result.stdout).toContain('expires_in:  900 s');
    expect(result.stdout).toContain('signature was NOT verified');
    expect(result.stdout).toMatch(/sub +e2e-client/);
    expect(result.stderr).not.toMatch(/^warn/m);
    for (const text of [result.stdout, result.stderr]) {
      expect(text).not.toContain(sandbox.clientSecret);
      expect(text).not.toContain(Buffer.from(`${sandbox.clientId}:${sandbox.clientSecret}`).toString('base64'));
    }
  });

  it('--raw works in $(...) and --json carries the scope claim; settings from env and a secret file', async () => {
    const file = join(tempDir, 'secret');
    await writeFile(file, `${sandbox.clientSecret}\n`);
    const env = {
      AREA_METRICS_AUTH_URL: `${sandbox.url}/oauth2/token`,
      AREA_METRICS_CLIENT_ID: sandbox.clientId,
      AREA_METRICS_CLIENT_SECRET_FILE: file,
    };
    const raw = await runBinary(['--raw'], env);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(hs256Valid(raw.stdout.trim(), sandbox.tokenSigningKey)).toBe(true);
    const json = await runBinary(['--json', '--scope', 'metrics:read'], env);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as { scope?: string; claims: Record<string, unknown>; header: Record<string, unknown> };
    expect(body.scope).toBe('metrics:read');
    expect(body.claims).toMatchObject({ sub: sandbox.clientId, scope: 'metrics:read' });
    expect(body.header).toMatchObject({ alg: 'HS256' });
  });

  it('a wrong secret exits 3 with the auth server error', async () => {
    const result = await runBinary(['--auth-url', sandbox.url, '--client-id', sandbox.clientId, '--client-secret', 'wrong-secret-9']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('invalid_client (Client authentication failed.)');
    expect(result.stderr).not.toContain('wrong-secret-9');
  });

  it('an auth server 503 exits 4 naming the URL', async () => {
    sandbox.setFaults({ tokenFailNth: { n: 1, status: 503 } });
    const result = await runBinary(creds(), { AREA_METRICS_CLIENT_SECRET: sandbox.clientSecret });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`POST ${sandbox.url}/oauth2/token: HTTP 503`);
  });

  it('a usage error exits 2 before any request', async () => {
    const before = sandbox.tokenRequests();
    const result = await runBinary(['--auth-url', sandbox.url, '--client-id', sandbox.clientId]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--client-secret');
    expect(sandbox.tokenRequests()).toBe(before);
  });
});
