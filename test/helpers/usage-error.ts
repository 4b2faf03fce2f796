import { expect } from 'vitest';
import { UsageError } from '../../src/errors.js';

/** The message of the usage error (exit 2) `run` throws; the test fails if it throws anything else or nothing. */
export function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error, and nothing was thrown');
}
