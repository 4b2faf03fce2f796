import type { Writable } from 'node:stream';
import type { Clock } from '../fetch/clock.js';
import type { Redactor } from '../redact.js';

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
  /**
   * Applied to the final error line (and an internal error's trace) before it is printed; a command that holds
   * credentials sets it, so an error text that echoes them (a gateway quoting the request) is masked too.
   */
  redact?: Redactor;
  /**
   * Calls `reload` on each SIGHUP until the returned function is called; a long-running server reads its config
   * again then. Absent in tests that pass no process.
   */
  readonly onReloadSignal?: (reload: () => void) => () => void;
  /**
   * What the HTTP client's retries and the pacer wait on; absent, the system's. Tests pass a virtual clock, so
   * backoffs and Retry-After holds are tested without waiting them out.
   */
  readonly clock?: Clock;
  /** Set by a command that finished without throwing but must not exit 0 (e.g. some units failed). */
  exitCode?: number;
}
