/**
 * The local Kafka broker's jars: resolved from Maven Central with the project's own pom
 * (kafka-broker.pom.xml, pinned versions) into a git-ignored cache beside the checkout,
 * `.cache/kafka-<version>/`, once. Resolution goes to a scratch folder that is renamed into
 * place when complete, so an interrupted download or two concurrent first runs never leave a
 * half-filled cache behind.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const KAFKA_POM = join(here, 'kafka-broker.pom.xml')

/** The pinned broker version, read from the pom so there is one place to change it. */
export function kafkaVersion(): string {
  const pom = readFileSync(KAFKA_POM, 'utf8')
  const m = /<artifactId>kafka_2\.13<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(pom)
  if (!m) throw new Error(`${KAFKA_POM}: no kafka_2.13 version`)
  return m[1]!
}

/** Where the jars go: FLOE's repository root `.cache/` (git-ignored), or `cacheRoot`. */
export function kafkaJarDir(cacheRoot = resolve(here, '..', '..', '.cache')): string {
  return join(cacheRoot, `kafka-${kafkaVersion()}`)
}

/** The jar folder, resolving it with Maven first if it is not there yet. */
export function ensureKafkaJars(cacheRoot?: string): string {
  const dir = kafkaJarDir(cacheRoot)
  if (existsSync(join(dir, '.complete'))) return dir
  const mvn = spawnSync('mvn', ['-v'], { stdio: 'ignore' })
  if (mvn.error || mvn.status !== 0) {
    throw new Error('the local Kafka broker is resolved with Maven, but `mvn` was not found on PATH: install it (apt-get install maven) or point --kafka at a broker of your own')
  }
  const scratch = `${dir}.partial-${process.pid}`
  rmSync(scratch, { recursive: true, force: true })
  mkdirSync(scratch, { recursive: true })
  const run = spawnSync(
    'mvn',
    ['-q', '-B', '-f', KAFKA_POM, 'dependency:copy-dependencies', `-DoutputDirectory=${scratch}`, '-DincludeScope=runtime'],
    { encoding: 'utf8', timeout: 600_000 },
  )
  if (run.status !== 0) {
    rmSync(scratch, { recursive: true, force: true })
    throw new Error(`resolving the Kafka broker jars with Maven failed (exit ${run.status ?? run.signal}):\n${`${run.stdout}${run.stderr}`.trim().slice(-3_000)}`)
  }
  writeFileSync(join(scratch, '.complete'), `${new Date().toISOString()}\n`)
  try {
    renameSync(scratch, dir)
  } catch (err) {
    // Another process finished first: its cache is as good as ours.
    rmSync(scratch, { recursive: true, force: true })
    if (!existsSync(join(dir, '.complete'))) throw err
  }
  return dir
}
