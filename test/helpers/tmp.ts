import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach } from 'vitest';

/** What a test context offers for per-test cleanup (vitest's `TestContext`); needed by concurrent tests. */
export interface CleanupContext {
  onTestFinished(fn: () => unknown): void;
}

/**
 * Call at the top of a test file (or a describe block): returns a function that makes a fresh temp folder. Folders
 * are removed after each test (afterEach). Concurrent tests pass their test context, so each folder is removed when
 * its own test finishes rather than when a neighbour does.
 */
export function useTempDirs(prefix = 'area-metrics-test-'): (context?: CleanupContext) => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (context) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    if (context) context.onTestFinished(() => rm(dir, { recursive: true, force: true }));
    else made.push(dir);
    return dir;
  };
}

/** Whether a path relative to an output (or a key relative to its prefix) is a run's manifest. */
export function isRunManifest(path: string): boolean {
  return /^_runs\/[^/]+\.json$/.test(path);
}

/** The coverage table a folder keeps beside its state: rewritten with the state, so no two runs write it alike. */
export const COVERAGE_TABLE = '_coverage/coverage.parquet';

/**
 * Every file under `dir` (hidden ones too), as sorted paths relative to `dir` with `/` separators, but the run
 * manifests (`<dir>/_runs/seq-<number>.json`; a temp file there is listed): each run's has a name of its own, and the
 * manifests' tests read them with `listFiles('<dir>/_runs')`; and the coverage table (its temp files are listed),
 * which records each run's load times as the state records its end (the coverage tests read it).
 */
export async function listFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .filter((path) => !isRunManifest(path) && path !== COVERAGE_TABLE)
    .sort();
}

/** The state file an import keeps beside the data. */
const STATE_FILE = '.area-metrics-state.json';

/** Every file under `dir` but the state file: what a run wrote for a loader. */
export async function dataFiles(dir: string): Promise<string[]> {
  return (await listFiles(dir)).filter((path) => path !== STATE_FILE);
}

/**
 * Every data file under `dir` with its bytes, keyed by relative path: for byte-for-byte comparisons of two runs. The
 * state file is left out: it records when each run ended, so no two runs write it alike.
 */
export async function readTree(dir: string): Promise<Map<string, Buffer>> {
  const tree = new Map<string, Buffer>();
  for (const path of await dataFiles(dir)) tree.set(path, await readFile(join(dir, path)));
  return tree;
}

/**
 * As `useTempDirs`, for a fixture the tests of a file (or a describe block) share: each folder is removed once they
 * have all run (afterAll), not after the test that made it.
 */
export function useSharedTempDirs(prefix = 'area-metrics-shared-'): () => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
