import type { Clock } from '../../src/fetch/clock.js';
import { runCli, type CliResult } from './cli.js';

export interface InProcessOptions {
  /** Added to the environment as `runCli` of cli.ts adds it. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** What the HTTP client's backoffs and the pacer wait on: a virtual clock makes retries take no time. */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

/**
 * Runs one command line in this process, as `src/index.ts` would in its own: real HTTP, files and state, its stdout
 * and stderr collected. `runCli` of cli.ts with a clock or a signal of the test's own.
 */
export function runInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<CliResult> {
  return runCli(args, options);
}
