import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { ROOT } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'area-metrics-package-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });

/**
 * What a container or a global install gets: the packed tarball installed with production dependencies only into an
 * empty folder, its binary run from there. A file missing from `files`, a runtime import of a dev dependency or a
 * broken bin path fails here, not in production.
 */
describe('the published package', () => {
  it('installs with production dependencies only and runs: --version, a broker start and one token against the sandbox', async () => {
    // dist/ is already built (npm test builds first); --ignore-scripts keeps pack from rebuilding it under the other tests.
    const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT)) as { filename: string }[];
    const tarball = join(dir, packed[0]!.filename);
    const install = join(dir, 'install');
    mkdirSync(install);
    writeFileSync(join(install, 'package.json'), '{"private":true}\n');
    // What a user's `npm install` does, without the parts that only cost time here: no lock file written, no audit.
    npm(['install', '--omit=dev', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', tarball], install);
    const binary = join(install, 'node_modules', '.bin', 'area-metrics');
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
        cwd: install,
        env: { PATH: process.env.PATH ?? '', PACKAGE_SECRET: 'package-secret-31f' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => broker.on('exit', (code) => resolve(code)));
      const firstLine = await new Promise<string>((resolve) => createInterface({ input: broker.stdout }).once('line', resolve));
      const base = /^broker listening on (http:\/\/\S+)$/.exec(firstLine)?.[1];
      expect(base).toBeDefined();
      const answer = await fetch(`${base}/api/gatekeeper-token?application_package=com.acme.shop`);
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { access_token: string }).access_token.split('.')).toHaveLength(3);
      broker.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await sandbox.close();
    }
  }, 240_000);
});
