import type { Writable } from 'node:stream';
import type { Ora } from 'ora';
import { createLogger, type Logger, type LoggerOptions, type LogLevel } from './logger.js';

/** What the import reports while it runs; the command picks the terminal or the cron flavour. */
export interface ImportProgress {
  readonly logger: Logger;
  /** How many warning lines the run has written so far (the summary counts them). */
  warnings(): number;
  page(label: string, page: number, rows: number): void;
  unitDone(line: string, fields: Record<string, unknown>): void;
  finish(summary: string, fields: Record<string, unknown>, ok: boolean): void;
}

/**
 * On a terminal (text logs, not quiet): an ora spinner with the metric, day, page and rows; log lines are printed
 * above it without tearing it. Elsewhere (cron, pipes, JSON logs): one line per finished unit and a summary line.
 */
export async function createImportProgress(
  stream: Writable & { isTTY?: boolean; columns?: number },
  options: Omit<LoggerOptions, 'stream'>,
): Promise<ImportProgress> {
  // A terminal that reports no width (a bare pty) would make ora clear an endless number of lines. The spinner
  // redraws with escape codes, so it needs what colour needs: a terminal, and no NO_COLOR.
  const interactive = options.color === true && (stream.columns ?? 0) > 0 && options.format === 'text' && options.level !== 'error';
  if (!interactive) {
    // Off a terminal (cron appending to a file) every line carries its time.
    const { logger, warnings } = countingWarnings(createLogger({ timestamps: !stream.isTTY, ...options, stream }), options.level);
    return {
      logger,
      warnings,
      page: (label, page, rows) => logger.debug(`${label}: page ${page}, ${rows} rows so far`),
      unitDone: (line, fields) => logger.info(line, fields),
      finish: (summary, fields, ok) => (ok ? logger.info(summary, fields) : logger.error(summary, fields)),
    };
  }
  // Loaded only on a terminal: cron never pays for it.
  const { default: ora } = await import('ora');
  const spinner: Ora = ora({ stream, isEnabled: true });
  let done = 0;
  // Log lines go above the spinner: clear it, write, draw it again.
  const above: Writable = Object.assign(Object.create(stream) as Writable, {
    write(chunk: string): boolean {
      spinner.clear();
      stream.write(chunk);
      if (spinner.isSpinning) spinner.render();
      return true;
    },
  });
  const { logger, warnings } = countingWarnings(createLogger({ ...options, stream: above }), options.level);
  return {
    logger,
    warnings,
    page(label, page, rows) {
      if (!spinner.isSpinning) spinner.start();
      spinner.text = `${label}: page ${page}, ${rows} rows (${done} units done)`;
    },
    unitDone(line, fields) {
      done++;
      logger.debug(line, fields);
      if (spinner.isSpinning) spinner.text = `${done} units done`;
    },
    finish(summary, _fields, ok) {
      if (ok) spinner.succeed(summary);
      else spinner.fail(summary);
    },
  };
}

/** A long job's progress: what is done of how much. */
export interface CountProgress {
  update(label: string, done: number, total: number): void;
  stop(): void;
}

/**
 * On a terminal that reports a width and takes colour (`color`, as `useColor` decides: the bar redraws with escape
 * codes, as the import's spinner does): an ora spinner with a bar of what is done of how much, redrawn at most every
 * 100 ms; elsewhere (cron, pipes, a test, NO_COLOR) nothing at all, so stdout and stderr stay the report's alone.
 */
export async function createCountProgress(
  stream: Writable & { isTTY?: boolean; columns?: number },
  color: boolean,
): Promise<CountProgress> {
  if (!color || !stream.isTTY || (stream.columns ?? 0) === 0) return { update: () => {}, stop: () => {} };
  const { default: ora } = await import('ora');
  const spinner: Ora = ora({ stream, isEnabled: true });
  let drawn = 0;
  return {
    update(label, done, total) {
      const now = Date.now();
      if (done < total && now - drawn < 100) return;
      drawn = now;
      const width = 20;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      if (!spinner.isSpinning) spinner.start();
      spinner.text = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
    },
    stop() {
      spinner.stop();
    },
  };
}

/** The logger, counting the warning lines it writes (none under `-q`): the summary counts what the run printed. */
function countingWarnings(inner: Logger, level: LogLevel): { logger: Logger; warnings: () => number } {
  let count = 0;
  const logger: Logger = {
    ...inner,
    warn: (message, fields) => {
      if (level !== 'error') count++;
      inner.warn(message, fields);
    },
  };
  return { logger, warnings: () => count };
}
