import { describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { useLoadProbe } from '../../helpers/load-probe.js';
import { closedPort } from '../../helpers/ports.js';
import { useTempDirs } from '../../helpers/tmp.js';

/**
 * pg is loaded only when a PostgreSQL output is used: the built binary, with a preloaded probe that says at exit
 * whether any pg module was loaded, starts every other command without it.
 */
const probe = useLoadProbe({ pg: /\/node_modules\/pg(-[a-z-]+)?\// });
const tempDir = useTempDirs('lazy-pg-');

async function probed(args: string[]): Promise<CliResult & { loaded: string[] }> {
  const result = await runCli(args, { process: true, env: probe.env() });
  return { ...result, loaded: probe.loaded(result.stderr) };
}

describe('the pg client library', () => {
  it('is not loaded by --help, --version or an import into a folder', async () => {
    const dir = await tempDir();
    const results = await Promise.all([
      probed(['--help']),
      probed(['--version']),
      probed(['traffic', '--base-url', 'http://127.0.0.1:9', '--client-id', 'c', '--date', '2026-01-05', '--dry-run', '-o', dir]),
    ]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.loaded).not.toContain('pg');
    }
  });

  it('is loaded when an import writes to a PostgreSQL database (the probe sees it)', async () => {
    const url = `postgresql://nobody@127.0.0.1:${await closedPort()}/none`;
    const result = await probed([
      'traffic',
      '--base-url',
      'http://127.0.0.1:9',
      '--client-id',
      'c',
      '--client-secret-file',
      probe.path(),
      '--date',
      '2026-01-05',
      '-o',
      url,
      '--retries',
      '0',
    ]);
    expect(result.code).toBe(4);
    expect(result.loaded).toEqual(['pg']);
  });
});
