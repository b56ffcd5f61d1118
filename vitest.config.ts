import { defineConfig } from 'vitest/config';

/**
 * Test files that stop the local RabbitMQ itself (`rabbitmqctl stop_app` / `start_app`): every other
 * file using the broker would lose its connections meanwhile, so `pnpm test` runs these alone, after
 * everything else (vitest.broker-faults.config.ts).
 */
export const BROKER_STOPPING_FILES = ['e2e/distributed.test.ts'];

/** What both runs share. */
export const SHARED_TEST_OPTIONS = {
  reporters: ['default', './scripts/summary-reporter.ts'],
  // The e2e tests run the build's JavaScript (scripts/build.ts): built once here, before them.
  globalSetup: ['./e2e/build.global-setup.ts'],
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    ...SHARED_TEST_OPTIONS,
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'e2e/**/*.test.ts',
      'deploy/test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**', ...BROKER_STOPPING_FILES],
  },
});
