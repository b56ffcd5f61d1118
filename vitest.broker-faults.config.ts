import { defineConfig } from 'vitest/config';
import { BROKER_STOPPING_FILES, SHARED_TEST_OPTIONS } from './vitest.config.js';

/** The second run of `pnpm test`: the files that stop RabbitMQ, alone (see vitest.config.ts). */
export default defineConfig({
  test: {
    ...SHARED_TEST_OPTIONS,
    include: BROKER_STOPPING_FILES,
    fileParallelism: false,
  },
});
