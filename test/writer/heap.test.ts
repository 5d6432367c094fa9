import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { HeapGuard, footprint } from '../../lib/writer/heap.js'

const MB = 2 ** 20
/** Live memory the test holds on purpose (ArrayBuffers count as V8 external memory). */
const hold = (mb: number) => Array.from({ length: mb }, () => new Uint8Array(MB).fill(1))

describe('HeapGuard (FLOE_GC_HEADROOM_MB)', () => {
  it('collects once the heap has grown by more than the headroom, then measures from after the collection', () => {
    let calls = 0
    const guard = new HeapGuard(4 * MB, () => calls++)
    guard.collect()
    expect(calls).toBe(0)
    const held = hold(8)
    guard.collect()
    expect(calls).toBe(1)
    // The 8 MB are still alive after the collection: the next check measures from there.
    guard.collect()
    expect(calls).toBe(1)
    expect(guard.collections).toBe(1)
    expect(held.length).toBe(8)
  })

  it('live growth doubles the headroom: filling 64 MB of live memory in 1 MB steps takes a few collections, not one per 4 MB', () => {
    let calls = 0
    const guard = new HeapGuard(4 * MB, () => calls++)
    const held: Uint8Array[][] = []
    for (let i = 0; i < 64; i++) {
      held.push(hold(1))
      guard.collect()
    }
    // Headrooms 4, 8, 16, 32 MB of growth: 4 collections for 64 MB (one per 4 MB would be 16).
    expect(calls).toBeGreaterThanOrEqual(3)
    expect(calls).toBeLessThanOrEqual(5)
    expect(held.length).toBe(64)
  })

  it('a collection that frees the garbage resets the headroom', async () => {
    // A real full GC (V8's own, exposed for this test), so that what it frees shows in the footprint.
    setFlagsFromString('--expose-gc')
    const realGc = runInNewContext('gc') as () => void
    // Garbage on the JS heap (V8 frees ArrayBuffers' memory after the collection, concurrently).
    const junk = (mb: number) => Array.from({ length: mb }, () => new Array<number>(MB / 8).fill(0.5))
    // Let V8 finish freeing the earlier tests' ArrayBuffers (tens of MB, freed concurrently after
    // a collection), so the footprint the guard starts from does not fall under it: collect and
    // wait until two readings 50 ms apart agree within 256 KB.
    for (let last = Number.NaN, i = 0; i < 40; i++) {
      realGc()
      await new Promise((resolve) => setTimeout(resolve, 50))
      const now = footprint()
      if (Math.abs(now - last) < MB / 4) break
      last = now
    }
    let garbage: number[][] | undefined
    let calls = 0
    const guard = new HeapGuard(16 * MB, () => {
      calls++
      garbage = undefined
      realGc()
    })
    const live = junk(32)
    guard.collect() // live growth: the headroom doubles to 32 MB
    expect(calls).toBe(1)
    garbage = junk(48)
    guard.collect() // 48 MB > 32 MB: collected; it freed them, so the headroom is 16 MB again
    expect(calls).toBe(2)
    garbage = junk(24)
    guard.collect()
    expect(calls).toBe(3)
    expect(live.length + (garbage?.length ?? 0)).toBe(32)
  })

  it('never collects with headroom 0 or without a collector', () => {
    let calls = 0
    const off = new HeapGuard(0, () => calls++)
    const none = new HeapGuard(MB, undefined)
    const held = hold(4)
    off.collect()
    none.collect()
    expect(calls).toBe(0)
    expect(off.collections + none.collections).toBe(0)
    expect(held.length).toBe(4)
  })
})
