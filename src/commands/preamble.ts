import { createLogger, useColor, type LogFormat, type Logger, type LogLevel } from '../log/logger.js';
import { createRedactor, type Credential, type Redactor } from '../redact.js';
import type { CommandContext } from './context.js';
import type { Reporter } from './reporter.js';

/** What every command that holds secrets does first. */
export interface Preamble {
  readonly context: CommandContext;
  readonly reporter: Reporter;
  /** Every secret the command holds: no log line, and not its final error line either, may show one. */
  readonly credentials: readonly Credential[];
}

/** The command's redactor, handed to the reporter: from here on the final error line is masked too. */
export function keepSecrets({ reporter, credentials }: Preamble): Redactor {
  const redact = createRedactor(credentials);
  reporter.use({ redact });
  return redact;
}

/** The command's logger on stderr and its redactor, both masking its secrets (the reporter masks them too). */
export function commandLogs(
  preamble: Preamble,
  { level, format = 'text' }: { readonly level: LogLevel; readonly format?: LogFormat },
): { logger: Logger; redact: Redactor } {
  const redact = keepSecrets(preamble);
  const { context, credentials } = preamble;
  return {
    logger: createLogger({ stream: context.stderr, format, level, credentials, color: useColor(context.stderr, context.env) }),
    redact,
  };
}
