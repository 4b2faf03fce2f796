import type { Writable } from 'node:stream';
import type { Clock } from '../fetch/clock.js';

/**
 * What a command may touch of the outside world; `src/index.ts` passes the real process, tests may pass fakes.
 * Nothing in it changes while a command runs: how a failure is reported is the `Reporter`'s business.
 */
export interface CommandContext {
  /** `columns`: a terminal's width, which help wraps to. */
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /** Aborted with an InterruptedError on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
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
}
