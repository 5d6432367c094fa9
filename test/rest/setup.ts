/**
 * vitest globalSetup of the REST suite (after test/setup/global.ts has started DynamoDB Local and
 * s3rver): installs the REST catalog server (install-server.sh). When Maven Central cannot be
 * reached (exit 3) the suite is skipped with a loud message; any other failure fails the run.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export function setup(): void {
  const run = spawnSync('bash', [join(root, 'test', 'rest', 'install-server.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 10 * 60_000 })
  if (run.status === 3) {
    const reason = 'Maven Central could not be reached, so the REST catalog server is not installed'
    process.env.FLOE_REST_SKIP = reason
    process.stderr.write(`\n${'!'.repeat(100)}\n!!! REST SUITE SKIPPED: ${reason}\n${'!'.repeat(100)}\n\n`)
    return
  }
  if (run.status !== 0) throw new Error(`test/rest/install-server.sh failed (exit ${run.status ?? run.signal}): see its output above`)
}
