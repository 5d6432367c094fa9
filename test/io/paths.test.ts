import { describe, expect, it } from 'vitest'
import { joinPath, parsePath } from '../../lib/io/paths.js'

describe('joinPath', () => {
  it('joins with exactly one slash and keeps the scheme', () => {
    expect(joinPath('s3://b/warehouse/', 'db', '/t/', 'metadata')).toBe('s3://b/warehouse/db/t/metadata')
    expect(joinPath('s3://b', 'k')).toBe('s3://b/k')
    expect(joinPath('file:///', 'tmp', 'x')).toBe('file:///tmp/x')
    expect(joinPath('file:///tmp/w', '')).toBe('file:///tmp/w')
    expect(joinPath('/abs', 'x')).toBe('/abs/x')
    expect(joinPath('rel', 'x/', 'y')).toBe('rel/x/y')
  })
})

describe('parsePath', () => {
  it('understands s3, s3a and s3n as S3', () => {
    expect(parsePath('s3://bucket/a/b')).toEqual({ kind: 's3', scheme: 's3', bucket: 'bucket', key: 'a/b' })
    expect(parsePath('s3a://bucket/a')).toEqual({ kind: 's3', scheme: 's3a', bucket: 'bucket', key: 'a' })
    expect(parsePath('s3://bucket')).toEqual({ kind: 's3', scheme: 's3', bucket: 'bucket', key: '' })
  })
  it('understands file:///abs, file:/abs and bare paths', () => {
    expect(parsePath('file:///tmp/a%20b')).toEqual({ kind: 'file', path: '/tmp/a b' })
    expect(parsePath('file:/tmp/a')).toEqual({ kind: 'file', path: '/tmp/a' })
    expect(parsePath('/tmp/a')).toEqual({ kind: 'file', path: '/tmp/a' })
  })
})
