import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { closedPort } from '../../helpers/ports.js';

/**
 * pg is loaded only when a PostgreSQL output is used: the built binary, with a preloaded probe that says at exit
 * whether any pg module was loaded, starts every other command without it.
 */
let dir: string;
let probe: string;
const PG_LOADED = 'PG MODULES LOADED';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lazy-pg-'));
  probe = join(dir, 'probe.cjs');
  await writeFile(
    probe,
    `process.on('exit', () => { if (Object.keys(require.cache).some((path) => /node_modules[\\\\/]pg(-[a-z-]+)?[\\\\/]/.test(path))) process.stderr.write('${PG_LOADED}\\n'); });\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const probed = (args: string[]) => runCli(args, { process: true, env: { NODE_OPTIONS: `--require ${probe}` } });

describe('the pg client library', () => {
  it('is not loaded by --help, --version or an import into a folder', async () => {
    const results = await Promise.all([
      probed(['--help']),
      probed(['--version']),
      probed(['traffic', '--base-url', 'http://127.0.0.1:9', '--client-id', 'c', '--date', '2026-01-05', '--dry-run', '-o', dir]),
    ]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).not.toContain(PG_LOADED);
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
      probe,
      '--date',
      '2026-01-05',
      '-o',
      url,
      '--retries',
      '0',
    ]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(PG_LOADED);
  });
});
