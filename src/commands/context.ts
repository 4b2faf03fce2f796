import type { Writable } from 'node:stream';

/** What a command may touch of the outside world; `src/index.ts` passes the real process, tests may pass fakes. */
export interface CommandContext {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /** Aborted with an InterruptedError on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /**
   * How the final error line is printed. A command that has set up its own logger (e.g. JSON logs) replaces it,
   * so the one line a failure prints has the same format as the rest of the run.
   */
  reportError: (message: string) => void;
  /** Set by a command that finished without throwing but must not exit 0 (e.g. some units failed). */
  exitCode?: number;
}
