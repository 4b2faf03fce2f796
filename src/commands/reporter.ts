import type { Writable } from 'node:stream';
import { exitCodeFor, messageOf, ReportedError } from '../errors.js';
import { createLogger, type Logger } from '../log/logger.js';
import type { Redactor } from '../redact.js';

/** What a command has set up that its final error line must follow. */
export interface ReportSetup {
  /** The command's logger: with `--log-format json` the error line is JSON too. */
  readonly logger?: Logger;
  /** Masks the credentials the command holds: an error text may echo them (a gateway quoting the request). */
  readonly redact?: Redactor;
}

/**
 * How a run ends for the user: the one error line of a failure and the exit code. `cli.ts` builds one per run and
 * hands it to the command, which tells it (`use`) how its lines look once it has a logger and credentials; nothing
 * else of the run is changed for that.
 */
export class Reporter {
  private logger: Logger;
  private redact: Redactor = (text) => text;
  private early: number | undefined;

  /**
   * Until a command has its own logger, error lines (usage errors among them) look like a run's: `error: ...`, with
   * the time in front off a terminal, so one pattern finds every error line of a log.
   */
  constructor(stderr: Writable & { isTTY?: boolean }) {
    this.logger = createLogger({ stream: stderr, format: 'text', level: 'error', timestamps: !stderr.isTTY });
  }

  use(setup: ReportSetup): void {
    if (setup.logger !== undefined) this.logger = setup.logger;
    if (setup.redact !== undefined) this.redact = setup.redact;
  }

  /** A failure already reported, known before the command ends (a failed unit): its exit code, if it is the first. */
  failed(exitCode: number): void {
    this.early ??= exitCode;
  }

  /** The exit code a failure already decided while the command still runs: a closed stdout ends the process with it. */
  get exitCodeSoFar(): number | undefined {
    return this.early;
  }

  /** One error line in the command's format, with its credentials masked. */
  line(message: string): void {
    this.logger.error(this.redact(message));
  }

  /** Prints what a thrown error has to say (nothing for one already reported, a trace for a bug); its exit code. */
  report(error: unknown): number {
    const exitCode = exitCodeFor(error);
    if (error instanceof ReportedError) return exitCode;
    this.line(messageOf(error));
    if (exitCode === 1 && error instanceof Error && error.stack)
      this.line(`internal error, please report it with this trace:\n${error.stack}`);
    return exitCode;
  }
}
