import { defineConfig } from 'vitest/config'

/**
 * `npm run test:interop`: real engines (Spark, PyIceberg, DuckDB) read and write Floe's tables.
 * Separate from `npm test` (it installs ~1 GB of engines and starts JVMs); one file at a time,
 * since each file holds one SparkSession on a 2-core machine.
 */
export default defineConfig({
  test: {
    include: ['test/interop/**/*.interop.ts'],
    globalSetup: ['test/setup/global.ts', 'test/interop/setup.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    pool: 'forks',
    fileParallelism: false,
    env: { POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
})
