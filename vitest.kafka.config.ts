import { configDefaults, defineConfig } from 'vitest/config'
import base from './vitest.config.js'

/** `npm run test:kafka`: the tests on a real Kafka broker (test/kafka-broker), started once by test/setup/kafka.ts. */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/kafka-broker/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    globalSetup: ['test/setup/global.ts', 'test/setup/kafka.ts'],
    // One broker, on a 2-core machine: files one after another.
    fileParallelism: false,
    testTimeout: 180_000,
  },
})
