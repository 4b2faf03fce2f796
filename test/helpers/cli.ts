import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

/** The package root and the BUILT executable that end-to-end tests spawn (build with `npx tsc -p tsconfig.build.json`). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = join(ROOT, 'bin/area-metrics.js');

export interface CliResult {
  /** Exit code, or null when the child was ended by a signal it did not handle. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** stderr with each line's leading timestamp removed (text logs off a terminal carry one), for matching messages. */
  readonly stderr: string;
  /** stderr exactly as written. */
  readonly rawStderr: string;
}

/** A text log line's leading time, ISO 8601 UTC with milliseconds. */
export const LOG_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /;

/** The text without the leading timestamp of each line. */
export function withoutTimestamps(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(LOG_TIMESTAMP, ''))
    .join('\n');
}

export interface CliOptions {
  /** Added to the child's environment (after AREA_METRICS_* and proxy variables are removed); undefined unsets. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** Written to the child's stdin, which is then closed. Without it stdin is closed at once. */
  readonly input?: string;
  /** The child is killed (SIGKILL) and the promise rejected after this long. Default 20 s. */
  readonly timeoutMs?: number;
}

export interface RunningCli {
  readonly pid: number;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Sends a signal to the child (SIGINT, SIGTERM, ...). */
  kill(signal: NodeJS.Signals): void;
  /** Settles when the child has exited and its pipes are drained. */
  readonly done: Promise<CliResult>;
}

const DEFAULT_TIMEOUT_MS = 20_000;
const live = new Set<ChildProcessWithoutNullStreams>();

/**
 * The child's environment: ours minus AREA_METRICS_* and proxy variables (they would change what is being tested),
 * with NO_COLOR so that text output has no escape codes, plus `extra`.
 */
export function cliEnv(extra: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AREA_METRICS_') && !/_proxy$/i.test(key)) env[key] = value;
  }
  env.NO_COLOR = '1';
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Fails fast with a clear message when the package has not been built. */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/index.js'))) {
    throw new Error('dist/ is missing: build first (npm run build, or npx tsc -p tsconfig.build.json)');
  }
}

/** Starts `node bin/area-metrics.js ...args` and returns a handle; for runs a test must signal or watch. */
export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: cliEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A child that exits before reading its input must not crash the test runner with EPIPE.
  child.stdin.on('error', () => {});
  child.stdin.end(options.input ?? '');

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const done = new Promise<CliResult>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`area-metrics ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr so far:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      live.delete(child);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolvePromise({ code, signal, stdout, stderr: withoutTimestamps(stderr), rawStderr: stderr });
    });
  });
  if (child.pid === undefined) throw new Error('could not spawn node');
  return {
    pid: child.pid,
    stdout: () => stdout,
    stderr: () => stderr,
    kill: (signal) => {
      child.kill(signal);
    },
    done,
  };
}

/** Runs `node bin/area-metrics.js ...args` to completion and collects exit code, stdout and stderr. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** Kills every child still running (for afterEach/afterAll), and waits until they are gone. */
export async function stopAllClis(): Promise<void> {
  const children = [...live];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolvePromise) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolvePromise();
          child.once('close', () => resolvePromise());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** Polls `condition` every 20 ms until it holds; rejects after `timeoutMs` naming `what`. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 20));
  }
}

/**
 * The first line a long-running command prints on stdout (`sandbox listening on ...`, `broker listening on ...`);
 * rejects with its stderr if it exits first.
 */
export async function firstLine(cli: RunningCli, timeoutMs = 10_000): Promise<string> {
  let exited: CliResult | undefined;
  void cli.done.then(
    (result) => (exited = result),
    () => undefined,
  );
  await waitUntil(() => cli.stdout().includes('\n') || exited !== undefined, 'the first line on stdout', timeoutMs);
  if (!cli.stdout().includes('\n')) throw new Error(`exited with ${exited?.code} before printing a line: ${cli.stderr()}`);
  return cli.stdout().split('\n')[0] as string;
}

/** The error lines a run printed (`area-metrics: <message>`), as their messages. */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').flatMap((line) => (line.startsWith('area-metrics: ') ? [line.slice('area-metrics: '.length)] : []));
}

/** A stream that keeps what is written to it, for a command run in this process. */
export function captured(): PassThrough & { text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return Object.assign(stream, { text: () => text });
}
