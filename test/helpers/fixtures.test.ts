import { existsSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixturesDir } from './fixtures.js'

describe('fixturesDir', () => {
  it('finds the shared Iceberg fixtures beside the repository', () => {
    const dir = fixturesDir('iceberg')
    expect(isAbsolute(dir)).toBe(true)
    expect(existsSync(join(dir, 'PROVENANCE.md'))).toBe(true)
  })

  it('names every place it looked when a kind does not exist', () => {
    expect(() => fixturesDir('no-such-kind')).toThrow(/fixtures 'no-such-kind' not found; looked in:\n {2}\/.*shared\/fixtures\/no-such-kind/)
  })
})
