import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
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

let dir: string;
let probe: string;
const PARQUET_LOADED = 'PARQUET WRITER LOADED';
const PARQUET_READER_LOADED = 'PARQUET READER LOADED';
const UNDICI_INDEX_LOADED = 'UNDICI INDEX LOADED';
const COMMANDER_LOADED = 'COMMANDER LOADED';
const ZOD_FILES_LOADED = 'ZOD FILES LOADED';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lazy-load-'));
  probe = join(dir, 'probe.mjs');
  // The Parquet writer is ESM (not in require.cache): a module-load hook sees it; undici is CommonJS.
  await writeFile(
    probe,
    [
      "import { register, createRequire } from 'node:module';",
      'const seen = new Set();',
      'const { port1, port2 } = new MessageChannel();',
      'port1.on("message", (url) => seen.add(url));',
      'port1.unref();',
      `register('data:text/javascript,' + encodeURIComponent('let port; export function initialize(data) { port = data.port; } export async function load(url, context, next) { port.postMessage(url); return next(url, context); }'), { data: { port: port2 }, transferList: [port2] });`,
      'const require = createRequire(import.meta.url);',
      "process.on('exit', () => {",
      `  if ([...seen].some((url) => url.includes('/node_modules/hyparquet-writer/'))) process.stderr.write('${PARQUET_LOADED}\\n');`,
      `  if ([...seen].some((url) => url.includes('/node_modules/hyparquet/'))) process.stderr.write('${PARQUET_READER_LOADED}\\n');`,
      `  if ([...seen].some((url) => url.includes('/node_modules/zod/'))) process.stderr.write('${ZOD_FILES_LOADED}\\n');`,
      `  if (Object.keys(require.cache).some((path) => /node_modules[\\\\/]undici[\\\\/]index\\.js$/.test(path))) process.stderr.write('${UNDICI_INDEX_LOADED}\\n');`,
      `  if (Object.keys(require.cache).some((path) => /node_modules[\\\\/]commander[\\\\/]/.test(path))) process.stderr.write('${COMMANDER_LOADED}\\n');`,
      '});',
    ].join('\n'),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An import with the probe; its output a folder named for the format, unless `output` names one (`-` for stdout). */
const probed = (format: string, env: Record<string, string> = {}, output = join(dir, format)) =>
  runCli(['unique-users', '--base-url', sandbox().url, '--client-id', 'lazy-client', '--date', DAY, '--format', format, '-o', output], {
    process: true,
    env: { AREA_METRICS_CLIENT_SECRET: SECRET, NODE_OPTIONS: `--import ${probe}`, ...env },
  });

describe('an import loads', () => {
  // To stdout: a folder's state keeps its coverage table as Parquet (docs/coverage.md), which loads the writer.
  it('neither the Parquet writer nor all of undici when it writes CSV without a proxy', async () => {
    const result = await probed('csv', {}, '-');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain(PARQUET_LOADED);
    // Nor the reader `backtest` reads Parquet back with, though the destination room that holds it is loaded.
    expect(result.stderr).not.toContain(PARQUET_READER_LOADED);
    expect(result.stderr).not.toContain(UNDICI_INDEX_LOADED);
    // zod comes bundled in one file of the build (scripts/build.mjs), not as its 95 files.
    expect(result.stderr).not.toContain(ZOD_FILES_LOADED);
  });

  it('the Parquet writer when it writes Parquet (the probe sees it)', async () => {
    const result = await probed('parquet');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(PARQUET_LOADED);
  });

  it("undici's package when a proxy is set (NO_PROXY lets the request past it)", async () => {
    const result = await probed('csv', { HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(UNDICI_INDEX_LOADED);
  });
});

describe('--version and help', () => {
  it("--version alone answers the package's version before the command line's parser loads", async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const env = { NODE_OPTIONS: `--import ${probe}` };
    const [long, short] = await Promise.all([runCli(['--version'], { process: true, env }), runCli(['-V'], { process: true, env })]);
    for (const result of [long, short]) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
      expect(result.stderr).not.toContain(COMMANDER_LOADED);
    }
  });

  it('help to a pipe is the text commander prints, from the build, without loading commander', async () => {
    const env = { NODE_OPTIONS: `--import ${probe}` };
    const lines = [['--help'], ['-h'], ['traffic', '--help'], ['help', 'sandbox'], ['broker', '-h']];
    const built = await Promise.all(lines.map((args) => runCli(args, { process: true, env })));
    for (const [index, args] of lines.entries()) {
      const [result, commander] = [built[index], await runCli(args)];
      expect(result?.code, result?.stderr).toBe(0);
      expect(result?.stdout, args.join(' ')).toBe(commander.stdout);
      expect(result?.stderr).not.toContain(COMMANDER_LOADED);
    }
  });

  it('any other command line loads the parser: a help command line with one more word, a word that is no command', async () => {
    const env = { NODE_OPTIONS: `--import ${probe}` };
    const [longer, unknown] = await Promise.all([
      runCli(['traffic', '--help', '--date'], { process: true, env }),
      runCli(['nope', '--help'], { process: true, env }),
    ]);
    expect(longer.code).toBe(2);
    expect(longer.stderr).toContain(COMMANDER_LOADED);
    expect(unknown.stderr).toContain(COMMANDER_LOADED);
  });
});
