import { defineConfig } from 'vitest/config'

/**
 * `npm run test:rest`: Floe's REST catalog client against a real REST catalog server (Apache
 * Iceberg's CatalogHandlers in a JVM, test/rest/server) and against Floe's own endpoint. Separate
 * from `npm test` because it resolves Maven jars and starts a JVM per file.
 */
export default defineConfig({
  test: {
    include: ['test/rest/**/*.rest.ts'],
    globalSetup: ['test/setup/global.ts', 'test/rest/setup.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    env: { POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'SILENT', POWERTOOLS_METRICS_DISABLED: 'true' },
  },
})
