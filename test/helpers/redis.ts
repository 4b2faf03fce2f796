import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port.mjs';
import { useStarted } from './use-started.js';

/** Path of redis-server, or undefined when it is not installed (tests then skip LOUDLY, never silently). */
export const redisServerBinary: string | undefined = (() => {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path !== '' ? path : undefined;
})();

/**
 * Call at the top of a Redis test file: whether to skip its Redis tests, with a loud warning. Never in CI, which
 * installs redis-server: there a missing binary makes the tests run and fail.
 */
export function warnIfRedisMissing(what: string): boolean {
  if (redisServerBinary || process.env.CI) return false;
  console.warn(
    `\n!!! SKIPPING ${what}: redis-server is not installed. Install it (apt-get install -y redis-server) to run these tests. !!!\n`,
  );
  return true;
}

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, waits for exit) and removes its temp dir. Safe to call twice. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

/**
 * A throwaway redis-server on a free loopback port, no persistence, in a temp dir. `args` are added to its command
 * line (e.g. `--replicaof 127.0.0.1 6379`); `sentinel` starts it as a Sentinel with a config file written from them.
 */
export async function startRedis(options: { port?: number; args?: readonly string[]; sentinelConfig?: string } = {}): Promise<TestRedis> {
  if (!redisServerBinary) throw new Error('redis-server is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'area-metrics-redis-'));
  // A given port (to restart a stopped server where its clients expect it) gets one try; a free one gets five.
  for (let attempt = 0; attempt < (options.port ? 1 : 5); attempt++) {
    const port = options.port ?? (await freePort());
    const base = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--loglevel', 'warning'];
    let args: string[];
    if (options.sentinelConfig !== undefined) {
      // A Sentinel rewrites its config file, so it needs one of its own.
      const file = join(dir, 'sentinel.conf');
      writeFileSync(file, `${options.sentinelConfig}\n`);
      args = [file, '--sentinel', ...base];
    } else {
      args = [...base, '--save', '', '--appendonly', 'no', ...(options.args ?? [])];
    }
    const child = spawn(redisServerBinary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const deadline = Date.now() + 5000;
    let up = false;
    while (Date.now() < deadline && child.exitCode === null) {
      if (await ping(port)) {
        up = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!up) {
      child.kill('SIGKILL');
      await waitForExit(child);
      continue; // the port was taken between probing and binding: try another
    }
    let stopped = false;
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        child.kill('SIGTERM');
        await waitForExit(child);
        rmSync(dir, { recursive: true, force: true });
      },
      kill: async () => {
        child.kill('SIGKILL');
        await waitForExit(child);
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error('could not start redis-server on a free port');
}

/** The redis-server of a test file (or a describe block), started before its tests and stopped after them. */
export function useRedis(): TestRedis & (() => TestRedis) {
  return useStarted(
    'redis-server',
    () => startRedis(),
    (redis) => redis.stop(),
  );
}
