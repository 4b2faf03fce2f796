import { Writable } from 'node:stream';
import { runCli } from '../../src/cli.js';
import type { CommandContext } from '../../src/commands/context.js';
import type { Clock } from '../../src/fetch/clock.js';
import { cliEnv, withoutTimestamps, type CliResult } from './cli.js';

/** A stream that keeps what is written to it (off a terminal, like cron's stderr). */
class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

export interface InProcessOptions {
  /** Added to the environment as `runCli` of cli.ts adds it to a child's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** What the HTTP client's backoffs and the pacer wait on: a virtual clock makes retries take no time. */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

/**
 * Runs one command line in this process, as `src/index.ts` would in its own: real HTTP, files and state, its stdout
 * and stderr collected. For exit codes and messages; what only a process shows (signals, real stderr) is spawned.
 */
export async function runInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<CliResult> {
  const stdout = new Collector();
  const stderr = new Collector();
  const context: CommandContext = {
    stdout,
    stderr,
    env: cliEnv(options.env),
    signal: options.signal ?? new AbortController().signal,
    ...(options.clock ? { clock: options.clock } : {}),
  };
  const code = await runCli(args, context);
  return { code, signal: null, stdout: stdout.text, stderr: withoutTimestamps(stderr.text), rawStderr: stderr.text };
}
