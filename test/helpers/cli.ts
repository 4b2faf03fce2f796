import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCli as runCommandLine } from '../../src/cli.js';
import type { CommandContext } from '../../src/commands/context.js';
import { InterruptedError } from '../../src/errors.js';
import type { Clock } from '../../src/fetch/clock.js';

/** The package root and the BUILT executable that spawning tests run (build with `npm run build`). */
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
  /** Added to the run's environment (after AREA_METRICS_* and proxy variables are removed); undefined unsets. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The child's working folder (default: the package root). A process only: in-process runs take absolute paths. */
  readonly cwd?: string;
  /** Written to the child's stdin, which is then closed. Without it stdin is closed at once. A process only. */
  readonly input?: string;
  /** The run is stopped (the child killed, the in-process run aborted) and the promise rejected after this long. Default 20 s. */
  readonly timeoutMs?: number;
  /**
   * Spawn the BUILT binary instead of running the command in the test process: for what only a process shows
   * (signals, EPIPE, real stdout/stderr, the process's working folder, what the AWS SDK reads from process.env).
   */
  readonly process?: boolean;
  /** In the test process: what retries and the pacer wait on (a virtual clock makes them take no time). */
  readonly clock?: Clock;
  /** In the test process: aborts the run (with an InterruptedError, as a signal to a process would). */
  readonly signal?: AbortSignal;
}

export interface RunningCli {
  /** The child's pid (the test process's own for a run in it). */
  readonly pid: number;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Sends a signal to the child (SIGINT, SIGTERM, ...); in the test process, SIGINT and SIGTERM abort the run as the process edge would. */
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
    throw new Error('dist/ is missing: build first (npm run build)');
  }
}

/** Starts `node bin/area-metrics.js ...args` and returns a handle; for runs a test must signal or watch. */
export function startCli(args: readonly string[], options: CliOptions = {}): RunningCli {
  assertBuilt();
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

/** A stream that keeps what is written to it, as a pipe delivers it (off a terminal): for a command run in this process. */
export function captured(): Writable & { text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return Object.assign(stream, { text: () => text });
}

/**
 * What `src/index.ts` hands a command, built for a run inside the test process: the one place that knows the
 * shape of CommandContext, so a change to it changes only this function.
 */
export function commandContext(io: {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  clock?: Clock;
}): CommandContext {
  return { stdout: io.stdout, stderr: io.stderr, env: io.env, signal: io.signal, ...(io.clock ? { clock: io.clock } : {}) };
}

/** In-process runs not finished yet, each with the controller that stops it (for stopAllClis). */
const liveInProcess = new Map<Promise<unknown>, AbortController>();

/**
 * Starts the command line in the test process: `runCli` of src/cli.ts with captured stdout and stderr, the
 * environment `cliEnv` makes, and its own abort signal. Exit codes, output and files are the binary's; `kill`
 * aborts the run as the process edge does on SIGINT/SIGTERM. For a server (sandbox) a test talks to, or runs a
 * test makes overlap; what only a process shows takes `startCli`.
 */
export function startInProcess(args: readonly string[], options: Omit<CliOptions, 'process'> = {}): RunningCli {
  if (options.cwd !== undefined || options.input !== undefined) {
    throw new Error('cwd and input need a process: pass absolute paths, or { process: true }');
  }
  const stdout = captured();
  const stderr = captured();
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(options.signal?.reason), { once: true });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const env = cliEnv(options.env);
  const run = runCommandLine(
    args,
    commandContext({ stdout, stderr, env, signal: controller.signal, ...(options.clock ? { clock: options.clock } : {}) }),
  );
  liveInProcess.set(run, controller);
  void run.finally(() => liveInProcess.delete(run)).catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`area-metrics ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr so far:\n${stderr.text()}`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  const done = Promise.race([run, timeout])
    .then(
      (code): CliResult => ({
        code,
        signal: null,
        stdout: stdout.text(),
        stderr: withoutTimestamps(stderr.text()),
        rawStderr: stderr.text(),
      }),
    )
    .finally(() => clearTimeout(timer));
  return {
    pid: process.pid,
    stdout: stdout.text,
    stderr: stderr.text,
    kill: (signal) => {
      if (signal !== 'SIGINT' && signal !== 'SIGTERM') throw new Error(`${signal} needs a process: use startCli`);
      controller.abort(new InterruptedError(signal));
    },
    done,
  };
}

/**
 * Runs `area-metrics ...args` to completion and collects exit code, stdout and stderr: in the test process, or as
 * `node bin/area-metrics.js` with `process: true`.
 */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return options.process === true ? startCli(args, options).done : startInProcess(args, options).done;
}

/** Kills every child and aborts every in-process run still going (for afterEach/afterAll), and waits until they are gone. */
export async function stopAllClis(): Promise<void> {
  const runs = [...liveInProcess];
  for (const [, controller] of runs) controller.abort(new Error('stopped by the test'));
  const children = [...live];
  await Promise.all([
    ...runs.map(([run]) => run.catch(() => undefined)),
    ...children.map(
      (child) =>
        new Promise<void>((resolvePromise) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolvePromise();
          child.once('close', () => resolvePromise());
          child.kill('SIGKILL');
        }),
    ),
  ]);
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

/** The error lines a run printed (`error: <message>`, after the time off a terminal), as their messages. */
export function errorLines(stderr: string): string[] {
  return withoutTimestamps(stderr)
    .split('\n')
    .flatMap((line) => (line.startsWith('error: ') ? [line.slice('error: '.length)] : []));
}
