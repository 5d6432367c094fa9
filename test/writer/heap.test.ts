import { describe, expect, it } from 'vitest'
import { HeapGuard } from '../../lib/writer/heap.js'

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
