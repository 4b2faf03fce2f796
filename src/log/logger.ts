import type { Writable } from 'node:stream';
import { createRedactor, type Credential, type Redactor } from '../redact.js';

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
  /** Credentials whose every spelling (raw, JSON-escaped, URL-encoded, Basic) is replaced by `***` in every line. */
  readonly credentials?: readonly Credential[];
  readonly color?: boolean;
  /** Text lines start with the time (ISO 8601, UTC), so a log appended to night after night can be read by night. */
  readonly timestamps?: boolean;
  readonly now?: () => Date;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const COLOR: Record<LogLevel, string> = { debug: '\x1b[2m', info: '', warn: '\x1b[33m', error: '\x1b[31m' };
const RESET = '\x1b[0m';

/** Every string in a field value, however deep, through the redactor; other values as they are. */
function redactValue(value: unknown, redact: Redactor): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((item: unknown) => redactValue(item, redact));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, redact)]));
  }
  return value;
}

export function createLogger(options: LoggerOptions): Logger {
  const redact = createRedactor(options.credentials ?? []);
  const now = options.now ?? (() => new Date());
  const write = (level: LogLevel, rawMessage: string, rawFields: LogFields = {}): void => {
    if (ORDER[level] < ORDER[options.level]) return;
    // Redacted before formatting: inside a JSON string a secret with `"` or `\` is spelled differently, and masking
    // the formatted line could cut an escape sequence in half.
    const message = redact(rawMessage);
    let line: string;
    if (options.format === 'json') {
      line = JSON.stringify({ time: now().toISOString(), level, msg: message, ...(redactValue(rawFields, redact) as LogFields) });
    } else {
      const prefix = level === 'info' ? '' : `${level}: `;
      const text = `${options.timestamps ? `${now().toISOString()} ` : ''}${prefix}${message}`;
      line = options.color && COLOR[level] ? `${COLOR[level]}${text}${RESET}` : text;
    }
    options.stream.write(`${line}\n`);
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
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR;
}
