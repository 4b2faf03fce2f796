import { afterEach, describe, expect, it } from 'vitest';
import { firstLine, runCli, startCli, stopAllClis } from '../helpers/cli.js';

afterEach(stopAllClis);

describe('e2e: area-metrics sandbox', () => {
  it('prints its URL on the first line, serves the API and the token endpoint, and stops cleanly on SIGTERM', async () => {
    const cli = startCli(['sandbox', '--port', '0', '--stores', '5', '--days', '2', '--seed', '9']);
    const match = /^sandbox listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(await firstLine(cli));
    expect(match).not.toBeNull();
    const base = match![1]!;
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const query = new URLSearchParams({ datetime_gte: `${day}T00:00:00Z`, datetime_lte: `${day}T23:59:59Z`, page_size: '2' });
    const auth = `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`;
    const response = await fetch(`${base}/api/bi/area-metrics/unique-users/?${query.toString()}`, { headers: { authorization: auth } });
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

    cli.kill('SIGTERM');
    const { code, stderr } = await cli.done;
    expect(stderr).toContain('sandbox stopped after 2 requests');
    expect(stderr).not.toMatch(/internal error|trace/i);
    // A signal is the sandbox's normal way to stop.
    expect(code).toBe(0);
  });

  it('fails with exit 2 and one clear line for a bad flag', async () => {
    const { code, stderr } = await runCli(['sandbox', '--port', '0', '--fail-nth', 'soon']);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('area-metrics: --fail-nth expects N:STATUS[:TIMES], e.g. 2:503 (got "soon")');
  });
});
