import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { ROOT } from '../helpers/cli.js';
import { headingAnchors, relativeLinks } from '../helpers/markdown.js';

const dir = mkdtempSync(join(tmpdir(), 'area-metrics-package-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every package name that an installed package (scoped ones too) lists among its dependencies. */
function requiredByInstalled(modules: string): Set<string> {
  const folders = readdirSync(modules).flatMap((name) =>
    name.startsWith('@') ? readdirSync(join(modules, name)).map((scoped) => `${name}/${scoped}`) : [name],
  );
  return new Set(
    folders.flatMap((folder) => {
      const path = join(modules, folder, 'package.json');
      return existsSync(path)
        ? Object.keys((JSON.parse(readFileSync(path, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {})
        : [];
    }),
  );
}

interface NpmRun {
  readonly stdout: string;
  /** stdout and stderr, where npm prints its warnings. */
  readonly output: string;
}

function npm(args: string[]): NpmRun {
  const result = spawnSync('npm', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} exited with ${result.status}:\n${result.stderr}`);
  return { stdout: result.stdout, output: `${result.stdout}\n${result.stderr}` };
}

const npmWarnings = (output: string): string[] => output.split('\n').filter((line) => /\bnpm (warn|WARN)\b|^WARN\b/.test(line));

/**
 * What a user installs: the packed tarball, installed globally into an empty prefix (production dependencies only,
 * as `npm install -g` does), its binary run from there. A file missing from `files`, a runtime import of a dev
 * dependency, a broken bin path, an install-time build or a dependency that wants a newer Node fails here.
 */
describe('the published package', () => {
  const prefix = join(dir, 'global');
  const installed = join(prefix, 'lib', 'node_modules', 'area-metrics');
  const binary = join(prefix, 'bin', 'area-metrics');
  let shipped: Set<string>;
  let packOutput: string;
  let installOutput: string;

  beforeAll(() => {
    // dist/ is already built (npm test builds first); --ignore-scripts keeps prepack from rebuilding it under the other tests.
    const pack = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir, ROOT]);
    const packed = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    shipped = new Set(packed[0]!.files.map((file) => file.path));
    packOutput = pack.output;
    installOutput = npm([
      'install',
      '-g',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      join(dir, packed[0]!.filename),
    ]).output;
  }, 240_000);

  it('packs and installs globally with no npm warning, no install-time script and no dev dependency', () => {
    expect(npmWarnings(packOutput)).toEqual([]);
    expect(npmWarnings(installOutput)).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const lifecycle of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts?.[lifecycle]).toBeUndefined();
    // A dev dependency that a production package needs too (ajv: fastify's) is installed for that package, not for us.
    const needed = requiredByInstalled(join(installed, 'node_modules'));
    for (const dev of Object.keys(manifest.devDependencies)) {
      if (!needed.has(dev)) expect(existsSync(join(installed, 'node_modules', dev)), dev).toBe(false);
    }
  });

  it('ships an MIT LICENSE', () => {
    const license = readFileSync(join(installed, 'LICENSE'), 'utf8');
    expect((JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { license: string }).license).toBe('MIT');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
  });

  it('ships every file (and heading) its Markdown links to', () => {
    const markdown = [...shipped].filter((path) => path.endsWith('.md'));
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/catch-up.md', 'docs/import.md']));
    const dead: string[] = [];
    for (const file of markdown) {
      for (const link of relativeLinks(readFileSync(join(installed, file), 'utf8'))) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), path));
        const found = target.endsWith('/') ? [...shipped].some((one) => one.startsWith(target)) : shipped.has(target);
        const anchored =
          anchor === undefined || !target.endsWith('.md') || headingAnchors(readFileSync(join(installed, target), 'utf8')).has(anchor);
        if (!found || !anchored) dead.push(`${file}: ${link}`);
      }
    }
    expect(dead).toEqual([]);
  });

  it('ships no source map that names a file it lacks', () => {
    // A map is only worth shipping with the sources it names (or their text inlined); a file's map comment must
    // name a shipped map.
    const missing: string[] = [];
    for (const file of [...shipped].filter((path) => path.endsWith('.js'))) {
      const mapName = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(installed, file), 'utf8'))?.[1];
      if (mapName === undefined || mapName.startsWith('data:')) continue;
      const mapPath = posix.join(posix.dirname(file), mapName);
      if (!shipped.has(mapPath)) {
        missing.push(`${file} -> ${mapPath}`);
        continue;
      }
      const map = JSON.parse(readFileSync(join(installed, mapPath), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      map.sources.forEach((source, index) => {
        if (typeof map.sourcesContent?.[index] === 'string') return;
        if (!shipped.has(posix.normalize(posix.join(posix.dirname(mapPath), source)))) missing.push(`${mapPath} -> ${source}`);
      });
    }
    expect(missing).toEqual([]);
  });

  it('runs from the global install: --version, a broker start and one token against the sandbox', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);

    const sandbox = await startSandbox({ clientId: 'package-client', clientSecret: 'package-secret-31f', stores: 1, days: 1 });
    try {
      const config = join(dir, 'broker.json');
      writeFileSync(
        config,
        JSON.stringify({
          authUrl: sandbox.url,
          platforms: { android: { clientId: 'package-client', clientSecretEnv: 'PACKAGE_SECRET' } },
          applications: { 'com.acme.shop': 'android' },
        }),
      );
      const broker = spawn(binary, ['broker', '--config', config, '--port', '0'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', PACKAGE_SECRET: 'package-secret-31f' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => broker.on('exit', (code) => resolve(code)));
      const firstLine = await new Promise<string>((resolve) => createInterface({ input: broker.stdout }).once('line', resolve));
      expect(firstLine).toMatch(/^broker listening on http:\/\/127\.0\.0\.1:\d+$/);
      const base = firstLine.slice('broker listening on '.length);
      const answer = await fetch(`${base}/api/gatekeeper-token?application_package=com.acme.shop`);
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { access_token: string }).access_token.split('.')).toHaveLength(3);
      broker.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await sandbox.close();
    }
  });
});
