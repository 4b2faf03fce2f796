import { defineConfig } from 'vitest/config';

/** Files that replace a module (vi.mock): they need modules of their own, loaded after the mock. */
const MOCKING_FILES = ['test/output/atomic-file.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two workers for a 2-core machine; servers and spawned binaries wait on I/O, not on the cores.
    pool: 'forks',
    maxWorkers: 2,
    // The AWS SDK's notice about Node versions, in the test process itself (the CLI silences its own at the edge).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
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
