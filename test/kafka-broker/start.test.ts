/**
 * `floe start --kafka` as a user runs it: the real CLI in a child process starts its own local
 * Kafka broker, produces the demo stream into it, reads it back through the poller into the
 * writer and committer, and prints the same summary as the simulator's run. Twice: the second
 * run finds the persisted broker log and consumer group and appends only its own records.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { testAws, uniqueName } from '../helpers/aws.js'

interface StartSummary {
  produced: number
  poison: number
  deadLetters: number
  tables: { table: string; rows: number; addedRows: number }[]
}

describe('floe start --kafka', () => {
  const aws = testAws()
  const dir = mkdtempSync(join(tmpdir(), 'floe-start-kafka-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL_S3: aws.endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: aws.endpoints.dynamodb,
    FLOE_PIPELINE: uniqueName('start-kafka'),
    FLOE_CONTROL_TABLE: uniqueName('start-kafka-control'),
    FLOE_CATALOG_TABLE: uniqueName('start-kafka-iceberg'),
  }
  const start = (records: number, seed: number) => {
    const run = spawnSync(process.execPath, ['bin/floe.mjs', 'start', '--kafka', '--records', String(records), '--seed', String(seed), '--dir', dir, '--json'], { env, encoding: 'utf8', timeout: 240_000 })
    expect(run.status, run.stderr + run.stdout).toBe(0)
    return { out: run.stdout, summary: JSON.parse(run.stdout.trim().split('\n').at(-1)!) as StartSummary }
  }

  it('produces the demo into the local broker and reads it back into the tables, twice', () => {
    const first = start(1_500, 7)
    expect(first.out).toMatch(/kafka: local broker 127\.0\.0\.1:\d+ \(Kafka 4, KRaft\)/)
    expect(first.out).toMatch(/kafka: produced 1500 records/)
    expect(first.out).toMatch(/records · \d[\d,]* rec\/s · lag \d/)
    expect(first.out).toMatch(/^table +rows \(\+this run\)/m)
    const added = (s: StartSummary) => s.tables.reduce((n, t) => n + t.addedRows, 0)
    expect(first.summary.produced).toBe(1_500)
    expect(added(first.summary), first.out).toBe(first.summary.produced - first.summary.poison)
    expect(first.summary.deadLetters).toBe(first.summary.poison)

    const second = start(800, 8)
    expect(second.summary.produced).toBe(800)
    expect(added(second.summary)).toBe(800 - second.summary.poison)
    expect(second.summary.deadLetters).toBe(first.summary.poison + second.summary.poison)
  })
})
