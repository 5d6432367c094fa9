/**
 * vitest globalSetup of the interop suite (after test/setup/global.ts has started DynamoDB Local
 * and s3rver): installs the pinned engines with install.sh and tells the test files where they
 * are. When PyPI or Maven Central cannot be reached (install.sh exits 3) the suite is skipped
 * with a loud message; any other install failure fails the run.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export function setup(): void {
  const started = Date.now()
  const run = spawnSync('bash', [join(root, 'test', 'interop', 'install.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 20 * 60_000 })
  if (run.status === 3) {
    const reason = 'a package registry (PyPI or Maven Central) could not be reached, so the engines are not installed'
    process.env.FLOE_INTEROP_SKIP = reason
    const bar = '!'.repeat(100)
    process.stderr.write(`\n${bar}\n!!! INTEROP SUITE SKIPPED: ${reason}\n${bar}\n\n`)
    return
  }
  if (run.status !== 0) throw new Error(`test/interop/install.sh failed (exit ${run.status ?? run.signal}): see its output above`)
  const jars = join(root, '.interop', 'jars')
  process.env.FLOE_INTEROP_PYTHON = join(root, '.interop', 'venv', 'bin', 'python')
  process.env.FLOE_INTEROP_JARS = readdirSync(jars)
    .filter((f) => f.endsWith('.jar'))
    .map((f) => join(jars, f))
    .join(',')
  process.stderr.write(`interop engines ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
}
