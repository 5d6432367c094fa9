/**
 * A Lambda-container stand-in that dies during its cold start fails its invocation at once: the
 * chaos test once hung for 20 minutes because such a container stayed behind as the live one and
 * the next invocation waited for an answer that could never come.
 */
import { describe, expect, it } from 'vitest'
import { testAws } from '../helpers/aws.js'
import { Container } from './containers.js'

describe('chaos containers', () => {
  it('a container that dies before "ready" fails its invocation at once, every time', async () => {
    const aws = testAws()
    // A preload module that does not exist makes Node exit during start-up, before the worker says "ready".
    const c = new Container('writer', { NODE_OPTIONS: '--require=./no-such-floe-preload.cjs' }, aws.endpoints)
    await expect(c.start()).rejects.toThrow(/exited .* before it was ready/)
    try {
      for (let i = 0; i < 2; i++) {
        const started = Date.now()
        const r = await c.invoke({})
        expect(r).toMatchObject({ ok: false, killed: true })
        expect(r.error).toMatch(/before it was ready.*no-such-floe-preload/s)
        expect(Date.now() - started).toBeLessThan(20_000)
      }
    } finally {
      await c.stop()
    }
  }, 60_000)
})
