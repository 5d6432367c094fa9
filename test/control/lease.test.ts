import { describe, expect, it } from 'vitest'
import { acquireLease, releaseLease, renewLease } from '../../lib/control/lease.js'
import { FencedError } from '../../lib/errors.js'
import { testControl } from './context.js'

describe('commit leases', () => {
  it('a held lease cannot be acquired; a released one can, with a higher epoch', async () => {
    const { ctx } = await testControl()
    const a = await acquireLease(ctx, 'p1', 'db.t', { owner: 'a' })
    expect(a).toMatchObject({ owner: 'a', epoch: 1 })
    expect(await acquireLease(ctx, 'p1', 'db.t', { owner: 'b' })).toBeUndefined()
    await releaseLease(ctx, a!)
    const b = await acquireLease(ctx, 'p1', 'db.t', { owner: 'b' })
    expect(b).toMatchObject({ owner: 'b', epoch: 2 })
  })

  it('leases of different tables and pipelines are independent', async () => {
    const { ctx } = await testControl()
    expect(await acquireLease(ctx, 'p1', 'db.t', { owner: 'a' })).toBeDefined()
    expect(await acquireLease(ctx, 'p1', 'db.u', { owner: 'a' })).toBeDefined()
    expect(await acquireLease(ctx, 'p2', 'db.t', { owner: 'a' })).toBeDefined()
  })

  it('an expired lease is taken over, and the old holder can neither renew nor release it', async () => {
    const { ctx } = await testControl({ leaseTtlMs: 1_000 })
    const now = Date.now()
    const a = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'a', nowMs: now }))!
    expect(await acquireLease(ctx, 'p1', 'db.t', { owner: 'b', nowMs: now + 500 })).toBeUndefined()
    const b = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'b', nowMs: now + 1_001 }))!
    expect(b.epoch).toBe(a.epoch + 1)
    await expect(renewLease(ctx, a)).rejects.toBeInstanceOf(FencedError)
    await releaseLease(ctx, a)
    // b still holds it: a's release did nothing.
    expect(await acquireLease(ctx, 'p1', 'db.t', { owner: 'c', nowMs: now + 1_002 })).toBeUndefined()
    expect((await renewLease(ctx, b)).epoch).toBe(b.epoch)
  })

  it('the same owner id with an old epoch is still fenced', async () => {
    const { ctx } = await testControl({ leaseTtlMs: 1_000 })
    const now = Date.now()
    const first = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'same', nowMs: now }))!
    const second = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'same', nowMs: now + 2_000 }))!
    expect(second.epoch).toBe(2)
    await expect(renewLease(ctx, first)).rejects.toThrow('commit lease epoch 1 of same was taken over')
  })
})
