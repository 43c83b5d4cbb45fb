import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Bounds that catch a hang, not a speed target: a synth or a stack start takes several times
    // longer while other processes keep both cores busy, and a test must pass there too.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Three workers on two cores: most test files wait on engines, browsers and child processes, so a
    // third keeps the cores busy. Measured the same evening on this 2-core machine, same commit, whole
    // suite: 2 workers 531 s, 3 workers 399 s, all 4,868 tests passing in both.
    maxWorkers: 3,
    // A worker runs its test files one after another in one module graph: the SDK, the engines and
    // the handlers are imported once per worker, not once per file, which was about half the
    // suite's time. A file therefore restores what it changes globally (env stubs, spies, timers),
    // and a stack's clients are kept per configuration (oncePerConfig), never per process.
    isolate: false,
    // metric lines to memory, not stdout (test/support/metrics-off-stdout.ts).
    setupFiles: ['test/support/metrics-off-stdout.ts'],
    // A folder for the run's one `cdk synth`, which the files needing the deployed bundles share
    // (test/support/cdk-synth-output.ts): made here, filled by the first file that asks.
    globalSetup: ['test/support/cdk-synth-global.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_LOG_LEVEL: 'WARN' },
  },
});
