/**
 * A registration whose pending-batch items are each under the spill threshold but together past
 * DynamoDB's 4 MB transaction limit (many tables × many files × wide column metrics) still
 * registers: the largest file lists spill for that one transaction.
 */
import { describe, expect, it } from 'vitest'
import { createControlContext } from '../../lib/control/context.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { TX_PAYLOAD_BUDGET, itemSizes, withTransactionBudget } from '../../lib/control/tx-budget.js'
import type { PendingBatchInput } from '../../lib/control/types.js'
import { encodeDataFile } from '../../lib/iceberg/datafile-json.js'
import { kafkaEvent, registered, writerSetup, type EventRecord } from '../writer/support.js'

const wideFile = (i: number, columns: number) => ({
  content: 0 as const,
  filePath: `s3://b/t/data/f${i}.parquet`,
  fileFormat: 'PARQUET' as const,
  specId: 0,
  partition: [i],
  recordCount: 1,
  fileSizeInBytes: 1000,
  lowerBounds: new Map(Array.from({ length: columns }, (_, c) => [c + 1, new TextEncoder().encode(`lower-bound-${c}-xxxx`)])),
  upperBounds: new Map(Array.from({ length: columns }, (_, c) => [c + 1, new TextEncoder().encode(`upper-bound-${c}-xxxx`)])),
  valueCounts: new Map(Array.from({ length: columns }, (_, c) => [c + 1, 1])),
})
const batch = (table: string, files: number, columns: number): PendingBatchInput => ({
  table,
  files: Array.from({ length: files }, (_, i) => encodeDataFile(wideFile(i, columns))),
  schemaId: 0,
  specId: 0,
  ranges: [{ topic: 't', partition: 0, firstOffset: 0n, nextOffset: 1n, records: 1, maxTimestamp: 0 }],
  recordCount: files,
  bytes: files * 1000,
})

describe('withTransactionBudget', () => {
  it('leaves a transaction that fits alone', async () => {
    const s = await writerSetup()
    const control = createControlContext(s.deps.config, s.control.doc, s.io)
    expect(withTransactionBudget(control, [batch('a', 2, 10)])).toBe(control)
  })

  it('lowers the spill threshold just enough for the largest lists to spill', async () => {
    const s = await writerSetup()
    const control = s.control
    const batches = Array.from({ length: 40 }, (_, i) => batch(`t${i}`, 24, 60))
    const sizes = itemSizes(batches)
    expect(sizes.every((n) => n < control.config.spillThresholdBytes)).toBe(true)
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(4 * 1024 * 1024)
    const ctx = withTransactionBudget(control, batches)
    const kept = sizes.filter((n) => n - 2048 - 256 <= ctx.config.spillThresholdBytes)
    const spilled = sizes.length - kept.length
    expect(spilled).toBeGreaterThan(0)
    expect(kept.reduce((a, b) => a + b, 0) + spilled * 2048).toBeLessThanOrEqual(TX_PAYLOAD_BUDGET)
  })
})

describe('a registration past 4 MB of items', () => {
  it('registers by spilling the largest file lists', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'wide', routes: [{ tableFromField: 'kind' }], tableDefaults: { partitionBy: ['identity(h)'] } }),
      FLOE_SPILL_THRESHOLD_KB: '390',
    })
    const records: EventRecord[] = []
    let offset = 0
    for (let t = 0; t < 22; t++) {
      for (let h = 0; h < 24; h++) {
        const value: Record<string, unknown> = { kind: `t${t}`, h }
        for (let c = 0; c < 120; c++) value[`column_${c}`] = `value-${c}-${t}-${h}-padding`
        records.push({ topic: 'wide', partition: 0, offset: offset++, value })
      }
    }
    const r = await writeBatch(s.deps, kafkaEvent(records))
    expect(r.outcome).toBe('registered')
    const reg = await registered(s.control)
    expect(reg.size).toBe(22)
    const batches = [...reg.values()].flatMap((x) => x.batches)
    const files = new Map([...reg.values()].flatMap((x) => [...x.files]))
    const sizes = itemSizes(batches.map((b) => ({ ...b, files: files.get(b.batchId)!.map(encodeDataFile) })))
    // Without spilling, this transaction's items would pass DynamoDB's 4 MB, each one under the threshold.
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(4 * 1024 * 1024)
    expect(Math.max(...sizes)).toBeLessThan(390 * 1024)
    expect(batches.some((b) => b.spillPath !== undefined)).toBe(true)
    expect([...reg.values()].flatMap((x) => [...x.files.values()].flat())).toHaveLength(22 * 24)
  }, 240_000)
})
