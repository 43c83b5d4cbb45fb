import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Embedded engines start per test file; two cores do not gain from more workers.
    maxWorkers: 2,
    // EMF metric lines to memory, not stdout (test/support/metrics-off-stdout.ts).
    setupFiles: ['test/support/metrics-off-stdout.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN' },
  },
});
