import { describe, expect, it } from 'vitest'
import { dataFilePath } from '../../lib/writer/files.js'
import { s3Prefix } from '../helpers/request-counter.js'

const md = (properties: Record<string, string> = {}) => ({ location: 's3://b/wh/db.db/t', properties })

describe('data file paths', () => {
  it('puts a 20-bit hash of the file name as four directories before the partition path (object-storage layout)', () => {
    const path = dataFilePath(md(), 'day=2024-05-01', 'req-1', 3)
    expect(path).toMatch(/^s3:\/\/b\/wh\/db\.db\/t\/data\/[01]{4}\/[01]{4}\/[01]{4}\/[01]{8}\/day=2024-05-01\/req-1-00003-[0-9a-f-]{36}\.parquet$/)
  })

  it('spreads files over many prefixes: 2,000 files of one partition land in more than 1,000 folders, none with more than 2% of them', () => {
    const counts = new Map<string, number>()
    for (let i = 0; i < 2_000; i++) {
      const prefix = s3Prefix(dataFilePath(md(), 'day=2024-05-01', 'w', i))
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1)
    }
    expect(counts.size).toBeGreaterThan(1_000)
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(40)
  })

  it('keeps the flat layout when the table sets write.object-storage.enabled=false, or when the default is off and the table says nothing', () => {
    expect(dataFilePath(md({ 'write.object-storage.enabled': 'false' }), 'p=1', 'w', 0)).toMatch(/^s3:\/\/b\/wh\/db\.db\/t\/data\/p=1\/w-00000-/)
    expect(dataFilePath(md(), '', 'w', 0, false)).toMatch(/^s3:\/\/b\/wh\/db\.db\/t\/data\/w-00000-/)
    expect(dataFilePath(md({ 'write.object-storage.enabled': 'true' }), '', 'w', 0, false)).toMatch(/\/data\/[01]{4}\/[01]{4}\/[01]{4}\/[01]{8}\/w-00000-/)
  })

  it('honours write.object-storage.path, then write.data.path', () => {
    expect(dataFilePath(md({ 'write.object-storage.path': 's3://other/objs/' }), '', 'w', 0)).toMatch(/^s3:\/\/other\/objs\/[01]{4}\//)
    expect(dataFilePath(md({ 'write.data.path': 's3://b/elsewhere' }), '', 'w', 0)).toMatch(/^s3:\/\/b\/elsewhere\/[01]{4}\//)
  })
})
