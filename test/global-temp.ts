import { accessSync, constants, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temp folder for the whole test run, every file a test writes under it (`TMPDIR` for the test processes and
 * what they spawn): on a memory file system where the machine has one, because the suite writes and fsyncs
 * thousands of small files and on a virtual disk that was a fifth of its CPU time; elsewhere under the usual temp
 * folder. Removed when the run ends, with whatever a failed test left behind. Tests of a full or read-only disk mount
 * their own (`helpers/tmpfs.ts`).
 */
export function runTempDir(): string {
  const base = memoryFileSystem() ?? tmpdir();
  return join(base, `area-metrics-tests-${process.pid}`);
}

function memoryFileSystem(): string | undefined {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return undefined;
  }
}

/** vitest's global setup: makes the folder before the first file and removes it after the last. */
export default function setup(): () => void {
  const dir = runTempDir(); // the same process as vitest.config.ts, so the same folder
  mkdirSync(dir, { recursive: true });
  return () => rmSync(dir, { recursive: true, force: true });
}
