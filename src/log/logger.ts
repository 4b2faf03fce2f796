import { Writable } from 'node:stream';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

export interface LogFields {
  readonly [key: string]: unknown;
}

/** Everything the core says goes through this; commands decide where it lands (stderr by default). */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  readonly stream: Writable;
  readonly format: LogFormat;
  /** Lowest level written: `-q` → error, default → info, `-v` → debug. */
  readonly level: LogLevel;
  /** Strings that must never be written (client secrets, tokens); replaced by `***`. */
  readonly secrets?: readonly string[];
  readonly color?: boolean;
  readonly now?: () => Date;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const COLOR: Record<LogLevel, string> = { debug: '\x1b[2m', info: '', warn: '\x1b[33m', error: '\x1b[31m' };
const RESET = '\x1b[0m';

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    // Very short "secrets" would shred ordinary words; they are still never logged on purpose.
    if (secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}

export function createLogger(options: LoggerOptions): Logger {
  const secrets = options.secrets ?? [];
  const now = options.now ?? (() => new Date());
  const write = (level: LogLevel, message: string, fields: LogFields = {}): void => {
    if (ORDER[level] < ORDER[options.level]) return;
    let line: string;
    if (options.format === 'json') {
      line = JSON.stringify({ time: now().toISOString(), level, msg: message, ...fields });
    } else {
      const prefix = level === 'info' ? '' : `${level}: `;
      const text = `${prefix}${message}`;
      line = options.color && COLOR[level] ? `${COLOR[level]}${text}${RESET}` : text;
    }
    options.stream.write(`${redact(line, secrets)}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

/** A logger that drops everything; for tests and library use. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR;
}
