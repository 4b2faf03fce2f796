import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A probe the built binary preloads, which says at exit which of the heavy packages the process loaded. */
export interface LoadProbe {
  /** The probe's file (written before the file's tests, removed after them). */
  path(): string;
  /** The environment that preloads it. */
  env(): { readonly NODE_OPTIONS: string };
  /** The names of the packages a run with the probe loaded, from its stderr. */
  loaded(stderr: string): string[];
}

const LOADED = 'PROBE LOADED: ';

/**
 * Call at the top of a test file: a probe that, at the exit of a process it is preloaded into, writes a line to stderr
 * for each of `packages` (a name, and a pattern of its modules' paths) the process loaded. ESM modules are seen by a
 * module-load hook (they are not in require.cache), CommonJS ones in require.cache.
 */
export function useLoadProbe(packages: Readonly<Record<string, RegExp>>): LoadProbe {
  let dir: string | undefined;
  const probe = (): string => {
    if (dir === undefined) throw new Error('the probe is written before the tests');
    return join(dir, 'probe.mjs');
  };
  const patterns = JSON.stringify(Object.entries(packages).map(([name, pattern]) => [name, pattern.source]));
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'load-probe-'));
    const hook =
      'let port; export function initialize(data) { port = data.port; } ' +
      'export async function load(url, context, next) { port.postMessage(url); return next(url, context); }';
    await writeFile(
      probe(),
      [
        "import { register, createRequire } from 'node:module';",
        'const seen = new Set();',
        'const { port1, port2 } = new MessageChannel();',
        'port1.on("message", (url) => seen.add(url));',
        'port1.unref();',
        `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}), { data: { port: port2 }, transferList: [port2] });`,
        'const require = createRequire(import.meta.url);',
        `const packages = ${patterns};`,
        "process.on('exit', () => {",
        '  const modules = [...seen, ...Object.keys(require.cache)];',
        `  for (const [name, source] of packages) if (modules.some((path) => new RegExp(source).test(path))) process.stderr.write(${JSON.stringify(LOADED)} + name + '\\n');`,
        '});',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  return {
    path: probe,
    env: () => ({ NODE_OPTIONS: `--import ${probe()}` }),
    loaded: (stderr) =>
      stderr
        .split('\n')
        .filter((line) => line.startsWith(LOADED))
        .map((line) => line.slice(LOADED.length)),
  };
}
