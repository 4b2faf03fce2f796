import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { runTempDir } from './test/global-temp.js';

/** Files that replace a module (vi.mock): they need modules of their own, loaded after the mock. */
const MOCKING_FILES = ['test/output/atomic-file.test.ts'];

/**
 * The order files start in, so that the waiting happens while `check` (typecheck and lint, run beside the tests) has
 * the CPU, and the last minute is short CPU-bound files filling both cores rather than a server test waiting on one:
 * first the files that mostly wait on real time (npm installing the packed package, a rate limit of 10 requests a
 * second, broker processes and their signals), then the other end-to-end and broker files (servers, processes,
 * timeouts), then the rest, its longest files first. Within each group vitest's own order stands (longest first once
 * it has timed a run; by size in a fresh clone, where nothing has been timed). The waiting files are listed longest
 * wait first.
 */
const WAITING_FILES = ['test/e2e/pacing.test.ts', 'test/e2e/package.test.ts', 'test/e2e/broker.test.ts'];
const SERVER_FOLDERS = ['/test/e2e/', '/test/broker/'];
/**
 * The longest of the rest (a year replayed, Parquet files written and read, lock take-overs, a cluster's lazy load),
 * first among them. Without timings (a fresh clone) vitest's order is by size, which put the year's replay among the
 * last files, alone on one core at the end: a run's measured file durations, replayed on two workers in that order,
 * ended 4 to 5% later.
 */
const LONG_FILES = [
  'test/backtest/sandbox-days.test.ts',
  'test/output/parquet.test.ts',
  'test/state/storage/file-lock-takeover.test.ts',
  'test/destination/postgres/lazy-load.test.ts',
];

class WaitingFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      // Last, once the shared workers have nothing left to start: a worker of another project takes a shared one's
      // place, and a shared file started after it would load every module again in a new worker.
      if (MOCKING_FILES.some((path) => file.moduleId.endsWith(path))) return 3;
      const waiting = WAITING_FILES.findIndex((path) => file.moduleId.endsWith(path));
      if (waiting !== -1) return waiting / WAITING_FILES.length;
      if (SERVER_FOLDERS.some((folder) => file.moduleId.includes(folder))) return 1;
      return LONG_FILES.some((path) => file.moduleId.endsWith(path)) ? 1.5 : 2;
    };
    // Array.prototype.sort is stable: vitest's order stands within a rank.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Three workers on a 2-core machine: a third of a worker's time is spent waiting (servers, spawned binaries,
    // timers), so two left the cores idle a third of the run (npm test in a fresh clone: 107 s with two, 92 with
    // three, 103 with four, where `check` beside it, at a lower priority, became the last to end).
    pool: 'forks',
    // A larger young generation: the suite allocates much short-lived data (pages, rows); fewer scavenges, ~8% less CPU.
    execArgv: ['--max-semi-space-size=64'],
    maxWorkers: 3,
    // The AWS SDK's notice about Node versions, in the test process itself (the CLI silences its own at the edge).
    // Every temp file of the run in one folder, on a memory file system where there is one (test/global-temp.ts).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', TMPDIR: runTempDir() },
    globalSetup: ['test/global-temp.ts'],
    setupFiles: ['test/buffer-equality.ts'],
    sequence: { sequencer: WaitingFirst },
    projects: [
      {
        extends: true,
        // Files share their worker's modules (src/, commander, zod, the AWS SDK load once per worker, not once per
        // file): most of the suite's CPU time was that loading. A file that changes global state undoes it.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: MOCKING_FILES, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: MOCKING_FILES } },
    ],
  },
});
