/**
 * `floe start` end to end, as a user runs it: the real CLI in a child process, against the
 * test run's endpoints (AWS_ENDPOINT_URL_* set, so it starts none of its own), twice.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { testAws, uniqueName } from '../helpers/aws.js'

interface StartSummary {
  produced: number
  poison: number
  deadLetters: number
  tables: { table: string; rows: number; addedRows: number; files: number; snapshots: number; partitions: number; deadLetters: number; metadataLocation: string }[]
}

function floeStart(args: string[], env: Record<string, string>): StartSummary {
  const run = spawnSync(process.execPath, ['bin/floe.mjs', 'start', '--json', '--quiet', ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 240_000,
  })
  expect(run.stderr + run.stdout).not.toMatch(/Error:/)
  expect(run.status).toBe(0)
  const last = run.stdout.trim().split('\n').at(-1)!
  return JSON.parse(last) as StartSummary
}

describe('floe start', () => {
  const aws = testAws()
  const env = () => ({
    AWS_ENDPOINT_URL_S3: aws.endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: aws.endpoints.dynamodb,
    FLOE_PIPELINE: uniqueName('start'),
    FLOE_CONTROL_TABLE: uniqueName('start-control'),
    FLOE_CATALOG_TABLE: uniqueName('start-iceberg'),
  })

  it('ingests a generated stream: rows = produced - poison, every poison record dead-lettered; a second run appends', () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-start-'))
    const vars = env()
    const first = floeStart(['--records', '2000', '--dir', dir, '--seed', '7'], vars)
    const rows = (s: StartSummary) => s.tables.reduce((n, t) => n + t.rows, 0)
    expect(first.produced).toBe(2000)
    expect(first.poison).toBeGreaterThan(0)
    expect(rows(first)).toBe(first.produced - first.poison)
    expect(first.deadLetters).toBe(first.poison)
    expect(first.tables.map((t) => t.table).sort()).toEqual(['demo.clicks', 'demo.orders'])
    const clicks = first.tables.find((t) => t.table === 'demo.clicks')!
    expect(clicks.partitions).toBeGreaterThan(1) // day(ts) over ~3 days

    const second = floeStart(['--records', '1000', '--dir', dir, '--seed', '8'], vars)
    expect(rows(second)).toBe(rows(first) + second.produced - second.poison)
    expect(second.deadLetters).toBe(first.poison + second.poison)
    for (const t of second.tables) {
      const before = first.tables.find((f) => f.table === t.table)!
      expect(t.snapshots).toBeGreaterThan(before.snapshots)
    }
  }, 300_000)

  it('ingests your own NDJSON records with matching counts, and ignores a re-run of the same offsets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-start-input-'))
    const file = join(dir, 'records.ndjson')
    const lines: string[] = []
    const next = new Map<string, number>()
    for (let i = 0; i < 1500; i++) {
      const topic = i % 3 === 0 ? 'payments' : 'signups'
      const partition = i % 2
      // Offsets with gaps, as after compaction.
      const offset = next.get(`${topic}-${partition}`) ?? 0
      next.set(`${topic}-${partition}`, offset + 1 + (i % 5 === 0 ? 1 : 0))
      lines.push(JSON.stringify({ topic, partition, offset, timestamp: 1_764_000_000_000 + i, key: `k${i}`, value: { n: i, amount: (i * 1.25).toFixed(2), at: new Date(1_764_000_000_000 + i * 1000).toISOString() } }))
    }
    writeFileSync(file, `${lines.join('\n')}\n`)
    const vars = env()
    const first = floeStart(['--input', file, '--dir', dir], vars)
    expect(first.produced).toBe(1500)
    expect(first.tables.reduce((n, t) => n + t.rows, 0)).toBe(1500)
    expect(first.tables.map((t) => t.table).sort()).toEqual(['default.payments', 'default.signups'])
    const again = floeStart(['--input', file, '--dir', dir], vars)
    expect(again.tables.reduce((n, t) => n + t.addedRows, 0)).toBe(0)
  }, 300_000)
})
