import { accessSync, constants, mkdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temp folder for the whole test run, every file a test writes under it (`TMPDIR` for the test processes and
 * what they spawn): on a memory file system where the machine has one, because the suite writes and fsyncs
 * thousands of small files and on a virtual disk that was a fifth of its CPU time; elsewhere (or when it has less
 * than a gigabyte free) under the usual temp folder. Removed when the run ends, with whatever a failed test left behind. Tests of a full or read-only disk mount
 * their own (`helpers/tmpfs.ts`).
 */
export function runTempDir(): string {
  const base = memoryFileSystem() ?? tmpdir();
  return join(base, `area-metrics-tests-${process.pid}`);
}

/** Room the suite's files need at their peak, with a margin; a container's default /dev/shm (64 MB) has less. */
const NEEDED_BYTES = 1024 ** 3;

function memoryFileSystem(): string | undefined {
  try {
    accessSync('/dev/shm', constants.W_OK);
    const { bavail, bsize } = statfsSync('/dev/shm');
    return bavail * bsize >= NEEDED_BYTES ? '/dev/shm' : undefined;
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
