import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';
import type { CommandContext } from '../../src/commands/context.js';
import { InterruptedError } from '../../src/errors.js';
import { errorLines, waitUntil } from '../helpers/cli.js';
import { basic } from './helpers.js';

class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

function fakeContext(): {
  context: CommandContext;
  stdout: Collector;
  stderr: Collector;
  controller: AbortController;
  errors: () => string[];
} {
  const stdout = new Collector();
  const stderr = new Collector();
  const controller = new AbortController();
  const context: CommandContext = { stdout, stderr, env: {}, signal: controller.signal };
  return { context, stdout, stderr, controller, errors: () => errorLines(stderr.text) };
}

describe('area-metrics sandbox command', () => {
  it('prints the base URL first, serves until the signal aborts, then returns 0', async () => {
    const { context, stdout, stderr, controller } = fakeContext();
    const running = runCli(['sandbox', '--port', '0', '--stores', '3', '--days', '2', '--fail-nth', '1:503', '-v'], context);
    await waitUntil(() => stdout.text.includes('\n'), 'the first line');
    const firstLine = stdout.text.split('\n')[0]!;
    const match = /^sandbox listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(firstLine);
    expect(match).not.toBeNull();
    expect(Number(match![2])).toBeGreaterThan(0);
    expect(stdout.text).toContain('client id:     demo-client');
    expect(stdout.text).toContain('client secret: demo-secret');
    expect(stdout.text).toContain('faults:        {"failNth":{"n":1,"status":503}}');
    expect(stdout.text).toContain("served:        a store's local day once it has ended");
    expect(stdout.text).toContain(`area-metrics all --base-url ${match![1]}`);
    // The day before yesterday: every store's local day in its UTC window has ended, so all of it is served.
    const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const url = `${match![1]}/api/bi/area-metrics/traffic?datetime_gte=${day}T00:00:00Z&datetime_lte=${day}T23:59:59Z`;
    const headers = { authorization: basic('demo-client', 'demo-secret') };
    expect((await fetch(url, { headers })).status).toBe(503);
    const ok = await fetch(url, { headers });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { count: number }).count).toBe(3);
    controller.abort(new InterruptedError('SIGTERM'));
    expect(await running).toBe(0);
    expect(stderr.text).toContain('GET /api/bi/area-metrics/traffic?');
    expect(stderr.text).toContain('sandbox stopped after 2 requests');
    await expect(fetch(url, { headers })).rejects.toThrow();
  });

  it('never prints a client secret the operator chose', async () => {
    const { context, stdout, stderr, controller } = fakeContext();
    const running = runCli(['sandbox', '--port', '0', '--client-id', 'me', '--client-secret', 'operator-chosen-secret', '-v'], context);
    await waitUntil(() => stdout.text.includes('stop with'), 'the banner');
    const base = /^sandbox listening on (\S+)$/m.exec(stdout.text)![1]!;
    const token = await fetch(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=me&client_secret=operator-chosen-secret',
    });
    expect(token.status).toBe(200);
    await token.arrayBuffer();
    controller.abort(new InterruptedError('SIGINT'));
    expect(await running).toBe(0);
    expect(stdout.text).toContain('client secret: (the one given with --client-secret)');
    expect(stdout.text + stderr.text).not.toContain('operator-chosen-secret');
  });

  it('rejects bad flags with exit 2', async () => {
    for (const args of [
      ['--fail-nth', '3'],
      ['--fail-nth', '3:99'],
      ['--rate-limit-nth', 'a:b'],
      ['--truncate-nth', '1:2:3'],
      ['--stores', '0'],
      ['--port', '70000'],
      ['--foreign-next-origin', 'not a url'],
      ['--rate-limit', '10'],
      ['--rate-limit', '0/s'],
      ['--rate-limit', '10/min'],
      ['--rate-limit-headers', 'draft'],
      ['--rate-limit', '10/s', '--rate-limit-headers', 'ietf'],
    ]) {
      const { context, errors, controller } = fakeContext();
      controller.abort(new InterruptedError('SIGINT')); // would stop at once if it started
      expect(await runCli(['sandbox', '--port', '0', ...args], context)).toBe(2);
      expect(errors()).toHaveLength(1);
    }
  });

  it('prints a try: command that works as printed, its secret in the environment', async () => {
    const sandbox = fakeContext();
    const running = runCli(['sandbox', '--port', '0', '--stores', '2', '--days', '2'], sandbox.context);
    await waitUntil(() => sandbox.stdout.text.includes('stop with'), 'the banner');
    const words = /^try: +(.+)$/m.exec(sandbox.stdout.text)![1]!.split(' ');
    const settings = words.slice(0, words.indexOf('area-metrics'));
    const args = words.slice(words.indexOf('area-metrics') + 1);
    expect(settings).toEqual(['AREA_METRICS_CLIENT_SECRET=demo-secret']);
    const output = await mkdtemp(join(tmpdir(), 'area-metrics-try-'));
    try {
      const importer = fakeContext();
      const env = Object.fromEntries(settings.map((setting) => setting.split('=') as [string, string]));
      // As printed, but into a temp folder instead of ./demo-data.
      const code = await runCli(
        args.map((word) => (word === './demo-data' ? output : word)),
        { ...importer.context, env },
      );
      expect(code, importer.errors().join('\n')).toBe(0);
      expect((await readdir(output)).sort()).toEqual([
        '.area-metrics-state.json',
        '_coverage',
        '_runs',
        'avg-screen-time',
        'traffic',
        'unique-users',
      ]);
    } finally {
      await rm(output, { recursive: true, force: true });
      sandbox.controller.abort(new InterruptedError('SIGINT'));
      expect(await running).toBe(0);
    }
  });

  it('takes a real rate limit and how to announce it', async () => {
    const { context, stdout, controller } = fakeContext();
    const running = runCli(
      ['sandbox', '--port', '0', '--stores', '3', '--days', '2', '--rate-limit', '2/s', '--rate-limit-headers', 'x'],
      context,
    );
    await waitUntil(() => stdout.text.includes('stop with'), 'the banner');
    expect(stdout.text).toContain('faults:        {"rateLimit":{"perSecond":2,"headers":"x"}}');
    const base = /^sandbox listening on (\S+)$/m.exec(stdout.text)![1]!;
    const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const url = `${base}/api/bi/area-metrics/traffic?datetime_gte=${day}T00:00:00Z&datetime_lte=${day}T23:59:59Z`;
    const headers = { authorization: basic('demo-client', 'demo-secret') };
    const answers = [await fetch(url, { headers }), await fetch(url, { headers }), await fetch(url, { headers })];
    await Promise.all(answers.map((answer) => answer.arrayBuffer()));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('2');
    controller.abort(new InterruptedError('SIGINT'));
    expect(await running).toBe(0);
  });

  it('reports a port in use as a usage error', async () => {
    const first = fakeContext();
    const running = runCli(['sandbox', '--port', '0'], first.context);
    await waitUntil(() => first.stdout.text.includes('\n'), 'the first line');
    const port = /:(\d+)\n/.exec(first.stdout.text)![1]!;
    const second = fakeContext();
    expect(await runCli(['sandbox', '--port', port], second.context)).toBe(2);
    expect(second.errors()[0]).toMatch(/EADDRINUSE.*--port/);
    first.controller.abort(new InterruptedError('SIGINT'));
    expect(await running).toBe(0);
  });
});
