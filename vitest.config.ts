import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Files that replace a module (vi.mock): they need modules of their own, loaded after the mock. */
const MOCKING_FILES = ['test/output/atomic-file.test.ts'];

/**
 * Files that spend most of their time waiting (npm installing the packed package): started first, so the cores work
 * on the other files meanwhile instead of waiting for them at the end. Vitest orders the rest (longest first once it
 * has timed a run; by size in a fresh clone).
 */
const WAITING_FILES = ['test/e2e/package.test.ts'];

class WaitingFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const waits = (file: TestSpecification) => WAITING_FILES.some((path) => file.moduleId.endsWith(path));
    return [...sorted.filter(waits), ...sorted.filter((file) => !waits(file))];
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two workers for a 2-core machine; servers and spawned binaries wait on I/O, not on the cores.
    pool: 'forks',
    maxWorkers: 2,
    // The AWS SDK's notice about Node versions, in the test process itself (the CLI silences its own at the edge).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    sequence: { sequencer: WaitingFilesFirst },
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
