import { configDefaults, defineConfig } from 'vitest/config'
import base from './vitest.config.js'

/**
 * `npm run test:slow`: the suites that take minutes each on 2 cores (`test/**\/*.slow.ts`): the
 * chaos subset, the maintenance soak, the 1,000-table writer run. Apart from `npm test` so that
 * stays near its 10-minute goal; `.ci/run` runs both. Same endpoints and settings as `npm test`.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/**/*.slow.ts'],
    exclude: [...configDefaults.exclude],
    testTimeout: 600_000,
  },
})
