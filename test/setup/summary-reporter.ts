/**
 * One plain closing line, `N passed, N failed` (`, N skipped`, `, N errors`), after vitest's own
 * summary, so anything reading the end of a CI log gets the counts without knowing vitest's
 * format. The counts are vitest's own: "failed" counts tests, as vitest's "Tests" line does; files
 * that failed to load and unhandled errors are counted apart, as its "Test Files" and "Errors" lines do.
 */
import type { Reporter, TestModule } from 'vitest/node'

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    let unloaded = 0
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) unloaded++ // a file that failed to load
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
    }
    const errors = unhandledErrors.length
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${unloaded ? `, ${unloaded} files failed to load` : ''}${errors ? `, ${errors} errors` : ''}\n`)
  }
}
