/**
 * Bounded memory and coalesced files (DESIGN.md invariants 4 and 6): one batch fanned out to
 * 50 tables × 24 hourly partition values, on DynamoDB Local + s3rver.
 */
import { describe, expect, it } from 'vitest'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { kafkaEvent, listAll, registered, writerSetup, type EventRecord } from './support.js'

const ROUTES = JSON.stringify({
  defaultNamespace: 'fan',
  routes: [{ tableFromField: 'kind' }],
  tableDefaults: { partitionBy: ['hour(ts)'] },
})

/** `perKey` records for each of 50 tables × 24 hours, spread over 4 Kafka partitions. */
function fanOut(perKey: number, padding: number): EventRecord[] {
  const out: EventRecord[] = []
  const offsets = [0, 0, 0, 0]
  const pad = 'x'.repeat(padding)
  for (let n = 0; n < perKey; n++) {
    for (let t = 0; t < 50; t++) {
      for (let h = 0; h < 24; h++) {
        const partition = (t + h + n) % 4
        const offset = offsets[partition]!++
        const ts = `2024-05-01T${String(h).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}:00Z`
        out.push({ topic: 'fan', partition, offset, value: { kind: `t${t}`, ts, n, pad } })
      }
    }
  }
  return out
}

async function run(settings: Record<string, string>, perKey: number, padding: number) {
  const s = await writerSetup({ FLOE_ROUTES: ROUTES, ...settings })
  const result = await writeBatch(s.deps, kafkaEvent(fanOut(perKey, padding)))
  const files = (await listAll(s.io, `${s.warehouse}/`)).filter((p) => p.endsWith('.parquet'))
  const reg = await registered(s.control)
  const registeredFiles = [...reg.values()].flatMap((r) => [...r.files.values()].flat())
  return { s, result, files, reg, registeredFiles }
}

describe('a batch routed to 50 tables × 24 partition values', () => {
  it('writes exactly one file per (table, partition value) when the budget is not reached', async () => {
    const { result, files, reg, registeredFiles } = await run({ FLOE_MEMORY_BUDGET_MB: '16' }, 2, 50)
    expect(result.flushes.budget).toBe(0)
    expect(result.peakBufferedBytes).toBeLessThanOrEqual(16 * 1024 * 1024)
    expect(reg.size).toBe(50)
    expect(files).toHaveLength(50 * 24)
    expect(registeredFiles).toHaveLength(50 * 24)
    // One file per (table, hour): no two files share a table and a partition tuple.
    const keys = new Set(registeredFiles.map((f) => `${f.filePath.split('/data/')[0]}|${JSON.stringify(f.partition)}`))
    expect(keys.size).toBe(50 * 24)
    expect(registeredFiles.reduce((n, f) => n + f.recordCount, 0)).toBe(2 * 50 * 24)
    expect(result.transactions).toBe(1)
  }, 240_000)

  it('never holds more than a 16 MB budget in buffers, flushing the largest buffer when it would', async () => {
    const budget = 16 * 1024 * 1024
    const { result, files, registeredFiles } = await run({ FLOE_MEMORY_BUDGET_MB: '16' }, 6, 1200)
    // The records outweigh the budget (by the writer's own estimate), so it had to flush early.
    expect(result.flushes.budget).toBeGreaterThan(0)
    expect(result.peakBufferedBytes).toBeLessThanOrEqual(budget)
    expect(result.peakBufferedBytes).toBeGreaterThan(budget * 0.9)
    // Files: one per buffer flushed at the end plus one per forced flush — never more — and
    // still every (table, hour) has its file(s).
    expect(files).toHaveLength(result.flushes.end + result.flushes.budget)
    expect(files.length).toBeLessThanOrEqual(50 * 24 + result.flushes.budget)
    expect(new Set(registeredFiles.map((f) => `${f.filePath.split('/data/')[0]}|${JSON.stringify(f.partition)}`)).size).toBe(50 * 24)
    expect(registeredFiles).toHaveLength(files.length)
    expect(registeredFiles.reduce((n, f) => n + f.recordCount, 0)).toBe(6 * 50 * 24)
  }, 240_000)
})

describe('the 1,200-file event (one 6 MB event: 50 tables × 24 partition values × 200 columns)', () => {
  it.each([16, 64])('keeps the writer accounting (rows + written files held to registration) within a %i MB budget', async (mb) => {
    const { memoryEvent, memoryRoutes } = await import('../bench/memory-data.js')
    const s = await writerSetup({ FLOE_ROUTES: JSON.stringify(memoryRoutes('wide')), FLOE_MEMORY_BUDGET_MB: String(mb) })
    const { event, records } = memoryEvent(50, 24)
    const result = await writeBatch(s.deps, event)
    expect(result.outcome).toBe('registered')
    expect(result.deadLetters).toBe(0)
    const files = result.tables.reduce((n, t) => n + t.files, 0)
    expect(result.tables.reduce((n, t) => n + t.rows, 0)).toBe(records)
    expect(files).toBeGreaterThanOrEqual(50 * 24)
    expect(files).toBe(result.flushes.end + result.flushes.budget + result.flushes['oversize-row'])
    expect(result.peakBufferedBytes).toBeLessThanOrEqual(mb * 1024 * 1024)
    // The written files' registration forms are charged: ~7 KB each for 200 columns.
    expect(result.peakBufferedBytes).toBeGreaterThan(files * 5_000)
  }, 300_000)
})
