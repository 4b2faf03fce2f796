import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli.js';

// `area-metrics broker` refusing to start, in-process: an exit code and one stderr line are all a process would show
// (test/e2e/broker.test.ts runs the broker as a process for what only a process shows: signals, drains, reloads).
const dir = mkdtempSync(join(tmpdir(), 'broker-command-'));

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof config === 'string' ? config : JSON.stringify(config));
  return path;
}

function goodConfig(authUrl: string): Record<string, unknown> {
  return {
    authUrl,
    platforms: {
      android: { clientId: 'command-client', clientSecretEnv: 'ANDROID_SECRET' },
      ios: { clientId: 'command-client', clientSecretEnv: 'IOS_SECRET_NOT_SET' },
      web: { clientId: 'command-client', clientSecretFile: join(dir, 'web-secret') },
    },
    applications: { 'com.acme.shop': 'android', 'com.acme.ShopApp': 'ios', 'shop.acme.example': 'web' },
    cache: { marginSeconds: 30 },
  };
}

async function runBroker(args: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  const chunks = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr'): Writable =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        chunks[name] += chunk.toString();
        callback();
      },
    });
  const code = await runCli(['broker', ...args], {
    stdout: sink('stdout'),
    stderr: sink('stderr'),
    env: {},
    signal: new AbortController().signal,
  });
  return { code, ...chunks };
}

describe('area-metrics broker, configuration errors', () => {
  it('exits 2 with one line naming the field for invalid configs, a missing --config or file, and a bad port', async () => {
    const cases: [string[], RegExp][] = [
      [['--config', writeConfig('unknown-key.json', { ...goodConfig('http://127.0.0.1:9'), colour: 'blue' })], /colour: unknown key/],
      [
        [
          '--config',
          writeConfig('undefined-platform.json', { ...goodConfig('http://127.0.0.1:9'), applications: { 'com.acme.tv': 'tvos' } }),
        ],
        /applications\.com\.acme\.tv: platform "tvos" is not defined/,
      ],
      [
        ['--config', writeConfig('no-auth-url.json', { ...goodConfig('http://127.0.0.1:9'), authUrl: undefined })],
        /platforms\.android\.authUrl: no auth URL/,
      ],
      [['--config', writeConfig('not-json.json', '{"authUrl": ')], /is not valid JSON/],
      [[], /missing --config/],
      [['--config', join(dir, 'nope.json')], /cannot read broker config .*nope\.json/],
      [
        ['--config', writeConfig('ok-port.json', goodConfig('http://127.0.0.1:9')), '--port', 'x'],
        /--port "x" must be a port number from 0 to 65535/,
      ],
      [
        ['--config', writeConfig('ok-redis.json', goodConfig('http://127.0.0.1:9')), '--redis-url', 'redis://:pw-7Hq@host:99999'],
        /--redis-url is not a valid redis:\/\/ URL/,
      ],
      [
        ['--config', writeConfig('bad-redis.json', { ...goodConfig('http://127.0.0.1:9'), cache: { redisUrl: 'redis://host:99999' } })],
        /cache\.redisUrl: is not a valid redis:\/\/ URL/,
      ],
      [
        [
          '--config',
          writeConfig('attestation-no-app-id.json', {
            ...goodConfig('http://127.0.0.1:9'),
            attestation: { mode: 'enforce', provider: 'firebase-app-check', projectNumber: '123456789' },
          }),
        ],
        /applications\.com\.acme\.shop: no appId: attestation \(mode enforce\) needs/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runBroker([...args, ...(args.includes('--port') ? [] : ['--port', '0'])]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).not.toContain('pw-7Hq');
      expect(run.stdout).toBe('');
    }
  });
});
