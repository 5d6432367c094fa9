import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/kafka-broker needs a real Kafka broker: `npm run test:kafka` (vitest.kafka.config.ts).
    exclude: [...configDefaults.exclude, 'test/kafka-broker/**'],
    globalSetup: ['test/setup/global.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Handlers log JSON and print EMF metrics; in tests that is noise (set POWERTOOLS_LOG_LEVEL=INFO to see it).
    env: { POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
})
