import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // End-to-end tests spawn processes and servers; two workers suit a 2-core machine.
    pool: 'forks',
    maxWorkers: 2,
    // The AWS SDK's notice about Node versions, in the test process itself (the CLI silences its own at the edge).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
