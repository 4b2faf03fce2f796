/**
 * One error class per exit code. Core code throws these with a user-facing message;
 * `exitCodeFor` in this file is the only place that turns an error into an exit code.
 */
export abstract class AreaMetricsError extends Error {
  abstract readonly exitCode: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad flag, bad date, missing configuration: nothing was requested. */
export class UsageError extends AreaMetricsError {
  readonly exitCode = 2;
}

/** The server rejected the credentials (401/403, or an OAuth 400/401). */
export class AuthError extends AreaMetricsError {
  readonly exitCode = 3;
}

/** Network failure, timeout, 429, 5xx or an unexpected status, after retries. */
export class UnavailableError extends AreaMetricsError {
  readonly exitCode = 4;
}

/** A body or record broke the data contract (docs/reliability.md). */
export class ContractError extends AreaMetricsError {
  readonly exitCode = 5;
}

/** Results still incomplete after fetching the unit three times. */
export class IncompleteError extends AreaMetricsError {
  readonly exitCode = 6;
}

/**
 * The output (a data file, a `_rejected/` file, the state, stdout) could not be written: a full, read-only or failing
 * disk, not a bug. Its message names the path and the reason in plain words.
 */
export class OutputError extends AreaMetricsError {
  readonly exitCode = 7;
}

/** `status --max-behind`: a metric is further behind than allowed, or has a gap. */
export class BehindError extends AreaMetricsError {
  readonly exitCode = 8;
}

/** The run was stopped by a signal; 128 + the signal number. */
export class InterruptedError extends AreaMetricsError {
  readonly exitCode: number;

  constructor(readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`);
    this.exitCode = signal === 'SIGINT' ? 130 : 143;
  }
}

/**
 * The failure has already been reported (a unit's error line and the summary, `check`'s FAIL lines): the run ends
 * with this exit code and prints nothing more.
 */
export class ReportedError extends AreaMetricsError {
  constructor(readonly exitCode: number) {
    super(`already reported; exit ${exitCode}`);
  }
}

export const INTERNAL_ERROR_EXIT_CODE = 1;

export function exitCodeFor(error: unknown): number {
  return error instanceof AreaMetricsError ? error.exitCode : INTERNAL_ERROR_EXIT_CODE;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The errno-style code (`ENOENT`, `ECONNREFUSED`, `ERR_...`) a Node or library error carries, if any. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
