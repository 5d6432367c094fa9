import { describe, expect, it } from 'vitest'
import { BufferPool, estimateRowBytes, partitionKeyOf, type FlushReason } from '../../lib/writer/buffers.js'

function pool(budgetBytes: number, targetFileBytes = Number.MAX_SAFE_INTEGER) {
  const flushed: { table: string; partition: string; rows: number; bytes: number; reason: FlushReason; bufferedBefore: number }[] = []
  const p: BufferPool<{ v: number }> = new BufferPool<{ v: number }>({
    budgetBytes,
    targetFileBytes,
    flush: async (b, reason) => {
      flushed.push({ table: b.table, partition: b.partitionKey, rows: b.rows.length, bytes: b.bytes, reason, bufferedBefore: p.stats.bufferedBytes })
    },
  })
  return { p, flushed }
}

describe('BufferPool', () => {
  it('keeps one buffer per (table, partition value) and flushes each once at the end', async () => {
    const { p, flushed } = pool(10_000)
    for (let i = 0; i < 30; i++) await p.add(`t${i % 3}`, [i % 2], partitionKeyOf([i % 2]), { v: i }, 10)
    expect(p.openBuffers).toBe(6)
    await p.flushAll()
    expect(flushed).toHaveLength(6)
    expect(flushed.every((f) => f.reason === 'end' && f.rows === 5)).toBe(true)
    expect(p.stats.bufferedBytes).toBe(0)
  })

  it('never holds more than the budget: the largest buffer is flushed first', async () => {
    const { p, flushed } = pool(100)
    await p.add('big', [], '[]', { v: 1 }, 60)
    await p.add('small', [], '[]', { v: 2 }, 30)
    await p.add('small', [], '[]', { v: 3 }, 30) // 120 > 100: flush 'big'
    expect(flushed).toEqual([{ table: 'big', partition: '[]', rows: 1, bytes: 60, reason: 'budget', bufferedBefore: 90 }])
    expect(p.stats.bufferedBytes).toBe(60)
    expect(p.stats.peakBufferedBytes).toBeLessThanOrEqual(100)
    expect(p.stats.flushes.budget).toBe(1)
  })

  it('rolls a buffer at the target file size', async () => {
    const { p, flushed } = pool(1_000, 50)
    for (let i = 0; i < 6; i++) await p.add('t', [], '[]', { v: i }, 20)
    expect(flushed.map((f) => [f.rows, f.reason])).toEqual([
      [3, 'target-size'],
      [3, 'target-size'],
    ])
  })

  it('writes a row larger than the whole budget on its own without buffering it', async () => {
    const { p, flushed } = pool(100)
    await p.add('t', [], '[]', { v: 1 }, 40)
    await p.add('t', [], '[]', { v: 2 }, 500)
    expect(flushed.map((f) => f.reason)).toEqual(['budget', 'oversize-row'])
    expect(p.stats.peakBufferedBytes).toBe(40)
  })
})

describe('estimateRowBytes', () => {
  it('charges more than the JSON size of a typical row', () => {
    const row = { id: 123456789n, name: 'a fairly ordinary string value', tags: ['x', 'y'], nested: { a: 1.5, b: true, c: null } }
    const json = JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
    expect(estimateRowBytes(row)).toBeGreaterThan(2 * json.length)
  })
})

describe('partitionKeyOf', () => {
  it('distinguishes bigint, bytes and strings', () => {
    expect(partitionKeyOf([1n])).not.toBe(partitionKeyOf(['1']))
    expect(partitionKeyOf([new Uint8Array([1, 2])])).toBe(partitionKeyOf([new Uint8Array([1, 2])]))
  })
})

describe('BufferPool (property)', () => {
  it('for any sequence of rows: never more than the budget buffered, every row flushed exactly once, one end flush per open buffer', async () => {
    const fc = await import('fast-check')
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 50, max: 2_000 }),
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 5 }), p: fc.integer({ min: 0, max: 3 }), bytes: fc.integer({ min: 1, max: 400 }) }), { maxLength: 200 }),
        async (budget, adds) => {
          let seen = 0
          let maxHeld = 0
          const flushedRows: number[] = []
          const p: BufferPool<{ i: number }> = new BufferPool<{ i: number }>({
            budgetBytes: budget,
            targetFileBytes: Number.MAX_SAFE_INTEGER,
            flush: async (b) => {
              maxHeld = Math.max(maxHeld, p.stats.bufferedBytes)
              for (const r of b.rows) flushedRows.push(r.i)
            },
          })
          for (const a of adds) {
            await p.add(`t${a.t}`, [a.p], String(a.p), { i: seen++ }, a.bytes)
            maxHeld = Math.max(maxHeld, p.stats.bufferedBytes)
          }
          const open = p.openBuffers
          await p.flushAll()
          expect(maxHeld).toBeLessThanOrEqual(budget)
          expect(p.stats.peakBufferedBytes).toBeLessThanOrEqual(budget)
          expect(flushedRows.sort((a, b) => a - b)).toEqual(Array.from({ length: seen }, (_, i) => i))
          expect(p.stats.flushes.end).toBe(open)
          expect(p.stats.bufferedBytes).toBe(0)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('BufferPool: bytes a flush leaves held', () => {
  it('charges them for the rest of the pool: rows get what is left, and the total never passes the budget', async () => {
    const seen: number[] = []
    const p: BufferPool<{ v: number }> = new BufferPool<{ v: number }>({
      budgetBytes: 100,
      targetFileBytes: Number.MAX_SAFE_INTEGER,
      // Every written file keeps 15 bytes (its registration form) until the pool is dropped.
      flush: async () => 15,
    })
    const add = async (table: string, bytes: number) => {
      await p.add(table, [], '[]', { v: 0 }, bytes)
      seen.push(p.stats.bufferedBytes)
    }
    await add('a', 50)
    await add('b', 40)
    await add('c', 30) // 120 > 100: 'a' written, 15 held: 40 + 30 + 15
    expect(p.stats.bufferedBytes).toBe(85)
    await add('d', 20) // 105 > 100: 'b' written: 30 + 20 + 30 held
    expect(p.stats.bufferedBytes).toBe(80)
    expect(p.stats.flushes.budget).toBe(2)
    await p.flushAll()
    // Rows released, four files' forms held.
    expect(p.stats.bufferedBytes).toBe(60)
    expect(Math.max(...seen, p.stats.peakBufferedBytes)).toBeLessThanOrEqual(100)
  })

  it('writes a row alone once the held bytes leave no room for it in a buffer', async () => {
    const reasons: FlushReason[] = []
    const p = new BufferPool<{ v: number }>({
      budgetBytes: 100,
      targetFileBytes: Number.MAX_SAFE_INTEGER,
      flush: async (_b, reason) => {
        reasons.push(reason)
        return 45
      },
    })
    await p.add('a', [], '[]', { v: 1 }, 60)
    await p.add('b', [], '[]', { v: 2 }, 60) // 'a' written (45 held); 45 + 60 > 100: 'b' alone (90 held)
    await p.add('c', [], '[]', { v: 3 }, 5) // 90 + 5 fits
    expect(reasons).toEqual(['budget', 'oversize-row'])
    expect(p.openBuffers).toBe(1)
    expect(p.stats.bufferedBytes).toBe(95)
    expect(p.stats.peakBufferedBytes).toBeLessThanOrEqual(100)
  })
})
