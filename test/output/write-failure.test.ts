import { describe, expect, it } from 'vitest';
import { exitCodeFor, InterruptedError, OutputError } from '../../src/errors.js';
import { asOutputError } from '../../src/output/write-failure.js';
import { WRITE_ERRNO_WORDS } from '../helpers/errno.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: from the system, open '/x'`), { code });
}

describe('asOutputError', () => {
  it.each<readonly [string, string]>([
    ...WRITE_ERRNO_WORDS,
    ['ENFILE', 'too many open files on this system'],
    ['ENOTDIR', 'a part of the path is a file, not a folder'],
  ])('%s is an output failure (exit 7) naming what and why in words: %s', (code, reason) => {
    const cause = errno(code);
    const error = asOutputError(cause, 'cannot write out/traffic/2026-11-20.csv');
    expect(error).toBeInstanceOf(OutputError);
    expect(exitCodeFor(error)).toBe(7);
    const { message } = error as OutputError;
    expect(message.startsWith(`cannot write out/traffic/2026-11-20.csv: ${reason} (${code}); `)).toBe(true);
    // One line, and the remedy after the reason.
    expect(message).not.toContain('\n');
    expect(message.split('; ')[1]?.length).toBeGreaterThan(5);
    expect((error as OutputError).cause).toBe(cause);
  });

  it.each(['EPIPE', 'EBADF', 'EINVAL', 'ERR_STREAM_DESTROYED'])('%s stays what it is (a closed pipe, or a bug)', (code) => {
    const error = errno(code);
    expect(asOutputError(error, 'cannot write x')).toBe(error);
  });

  it('leaves errors without a code (an interrupt, a bug) and OutputErrors as they are', () => {
    const interrupted = new InterruptedError('SIGINT');
    const bug = new TypeError('x is undefined');
    const output = new OutputError('cannot write a: disk full');
    expect(asOutputError(interrupted, 'cannot write b')).toBe(interrupted);
    expect(asOutputError(bug, 'cannot write b')).toBe(bug);
    expect(asOutputError(output, 'cannot write b')).toBe(output);
    expect(asOutputError('a string', 'cannot write b')).toBe('a string');
  });
});
