import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, type CliResult } from '../helpers/cli.js';
import { useLoadProbe } from '../helpers/load-probe.js';
import { useTempDirs } from '../helpers/tmp.js';
import { clockedCli, daysBefore, noonToday, useSandbox } from '../helpers/sandbox-clock.js';

/**
 * What an import loads at start, as the built binary shows it: a preloaded probe says at exit which of the heavy
 * modules were loaded. The Parquet writer is loaded only by a run that writes Parquet; undici's whole package only
 * when a proxy is set (without one, its plain agent comes from its own file).
 */
const CLOCK = noonToday();
const { runCli } = clockedCli(CLOCK);
const DAY = daysBefore(CLOCK)(2);
const SECRET = 'e2e-Lazy-Load-Secret-3';
const sandbox = useSandbox({ stores: 3, zones: 2, days: 4, clientId: 'lazy-client', clientSecret: SECRET });

// The Parquet writer and reader are ESM, undici and commander CommonJS: the probe sees both kinds.
const probe = useLoadProbe({
  'parquet writer': /\/node_modules\/hyparquet-writer\//,
  'parquet reader': /\/node_modules\/hyparquet\//,
  'undici index': /\/node_modules\/undici\/index\.js$/,
  commander: /\/node_modules\/commander\//,
  // zod comes bundled in one file of the build (scripts/build.mjs), not as its 95 files.
  'zod files': /\/node_modules\/zod\//,
});
const tempDir = useTempDirs('lazy-load-');

/** An import with the probe; its output a folder named for the format, unless `output` names one (`-` for stdout). */
async function probed(format: string, env: Record<string, string> = {}, output?: string): Promise<CliResult & { loaded: string[] }> {
  const out = output ?? join(await tempDir(), format);
  const result = await runCli(
    ['unique-users', '--base-url', sandbox().url, '--client-id', 'lazy-client', '--date', DAY, '--format', format, '-o', out],
    {
      process: true,
      env: { AREA_METRICS_CLIENT_SECRET: SECRET, ...probe.env(), ...env },
    },
  );
  return { ...result, loaded: probe.loaded(result.stderr) };
}

describe('an import loads', () => {
  // To stdout: a folder's state keeps its coverage table as Parquet (docs/coverage.md), which loads the writer.
  it('neither the Parquet writer nor all of undici when it writes CSV without a proxy', async () => {
    const result = await probed('csv', {}, '-');
    expect(result.code, result.stderr).toBe(0);
    expect(result.loaded).not.toContain('parquet writer');
    // Nor the reader `backtest` reads Parquet back with, though the destination room that holds it is loaded.
    expect(result.loaded).not.toContain('parquet reader');
    expect(result.loaded).not.toContain('undici index');
    expect(result.loaded).not.toContain('zod files');
  });

  it('the Parquet writer when it writes Parquet (the probe sees it)', async () => {
    const result = await probed('parquet');
    expect(result.code, result.stderr).toBe(0);
    expect(result.loaded).toContain('parquet writer');
  });

  it("undici's package when a proxy is set (NO_PROXY lets the request past it)", async () => {
    const result = await probed('csv', { HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.loaded).toContain('undici index');
  });
});

describe('--version and help', () => {
  it("--version alone answers the package's version before the command line's parser loads", async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const env = probe.env();
    const [long, short] = await Promise.all([runCli(['--version'], { process: true, env }), runCli(['-V'], { process: true, env })]);
    for (const result of [long, short]) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
      expect(probe.loaded(result.stderr)).not.toContain('commander');
    }
  });

  it('help to a pipe is the text commander prints, from the build, without loading commander', async () => {
    const env = probe.env();
    const lines = [['--help'], ['-h'], ['traffic', '--help'], ['help', 'sandbox'], ['broker', '-h']];
    const built = await Promise.all(lines.map((args) => runCli(args, { process: true, env })));
    for (const [index, args] of lines.entries()) {
      const [result, commander] = [built[index], await runCli(args)];
      expect(result?.code, result?.stderr).toBe(0);
      expect(result?.stdout, args.join(' ')).toBe(commander.stdout);
      expect(probe.loaded(result?.stderr ?? '')).not.toContain('commander');
    }
  });

  it('any other command line loads the parser: a help command line with one more word, a word that is no command', async () => {
    const env = probe.env();
    const [longer, unknown] = await Promise.all([
      runCli(['traffic', '--help', '--date'], { process: true, env }),
      runCli(['nope', '--help'], { process: true, env }),
    ]);
    expect(longer.code).toBe(2);
    expect(probe.loaded(longer.stderr)).toContain('commander');
    expect(probe.loaded(unknown.stderr)).toContain('commander');
  });
});
