import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function startCli(args: string[]): { child: ChildProcess; firstLine: Promise<string>; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, ['bin/area-metrics.js', 'sandbox', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout! });
  const firstLine = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code} before printing: ${stderr}`)));
  });
  firstLine.catch(() => {}); // a test that expects an early exit does not read the first line
  return { child, firstLine, stdout: () => stdout, stderr: () => stderr };
}

describe('e2e: area-metrics sandbox', () => {
  it('prints its URL on the first line, serves the API and the token endpoint, and stops cleanly on SIGTERM', async () => {
    const { child, firstLine, stderr } = startCli(['--port', '0', '--stores', '5', '--days', '2', '--seed', '9']);
    const match = /^sandbox listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(await firstLine);
    expect(match).not.toBeNull();
    const base = match![1]!;
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const query = new URLSearchParams({ datetime_gte: `${day}T00:00:00Z`, datetime_lte: `${day}T23:59:59Z`, page_size: '2' });
    const auth = `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`;
    const response = await fetch(`${base}/api/bi/area-metrics/unique-users/?${query}`, { headers: { authorization: auth } });
    expect(response.status).toBe(200);
    const envelope = (await response.json()) as { count: number; next: string | null };
    expect(envelope.count).toBe(5);
    expect(envelope.next).toMatch(new RegExp(`^${base}/api/bi/area-metrics/unique-users/\\?.*page=2`));
    const token = await fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    expect(((await token.json()) as { expires_in: number }).expires_in).toBe(3600);

    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(stderr()).toContain('sandbox stopped after 2 requests');
    expect(stderr()).not.toMatch(/internal error|trace/i);
    // A signal is the sandbox's normal way to stop.
    expect(code).toBe(0);
  });

  it('fails with exit 2 and one clear line for a bad flag', async () => {
    const { child, stderr } = startCli(['--port', '0', '--fail-nth', 'soon']);
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(2);
    expect(stderr().trim()).toBe('area-metrics: --fail-nth expects N:STATUS[:TIMES], e.g. 2:503 (got "soon")');
  });
});
