import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createFileIO, withPathMap } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { FileNotFoundError } from '../../lib/errors.js'
import { createTestBucket, testAws } from '../helpers/aws.js'

const tempDirs: string[] = []
afterAll(() => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true })
})
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'floe-io-'))
  tempDirs.push(d)
  return d
}

async function collect(io: FileIO, prefix: string): Promise<string[]> {
  const out: string[] = []
  for await (const f of io.list(prefix)) out.push(f.path)
  return out.sort()
}

/** The same behaviour on both stores. */
const stores: [string, () => Promise<{ io: FileIO; root: string }>][] = [
  ['s3', async () => ({ io: createFileIO(testAws().clients, { listPageSize: 2 }), root: `s3://${await createTestBucket()}/warehouse` })],
  ['file', async () => ({ io: createFileIO(testAws().clients), root: `file://${tempDir()}/warehouse` })],
]

describe.each(stores)('FileIO on %s', (_name, make) => {
  it('reads back what it wrote, bytes and text, and overwrites', async () => {
    const { io, root } = await make()
    await io.write(`${root}/a/b/c.bin`, new Uint8Array([0, 1, 2, 255]))
    expect([...(await io.read(`${root}/a/b/c.bin`))]).toEqual([0, 1, 2, 255])
    await io.write(`${root}/a/b/c.bin`, 'héllo')
    expect(new TextDecoder().decode(await io.read(`${root}/a/b/c.bin`))).toBe('héllo')
    const info = await io.stat(`${root}/a/b/c.bin`)
    expect(info?.size).toBe(6)
    expect(info?.path).toBe(`${root}/a/b/c.bin`)
  })

  it('reports a missing file: read throws FileNotFoundError naming it, exists/stat say no, delete is fine', async () => {
    const { io, root } = await make()
    await expect(io.read(`${root}/missing.json`)).rejects.toThrow(FileNotFoundError)
    await expect(io.read(`${root}/missing.json`)).rejects.toThrow(`${root}/missing.json`)
    expect(await io.exists(`${root}/missing.json`)).toBe(false)
    expect(await io.stat(`${root}/missing.json`)).toBeUndefined()
    await io.delete(`${root}/missing.json`)
  })

  it('lists every file under a prefix recursively, across pages, in the caller’s path form', async () => {
    const { io, root } = await make()
    const names = ['t/metadata/v1.json', 't/metadata/v2.json', 't/data/x=1/f1.parquet', 't/data/x=2/f2.parquet', 't/data/f3.parquet', 'other/f.parquet']
    for (const n of names) await io.write(`${root}/${n}`, n)
    expect(await collect(io, `${root}/t/`)).toEqual(names.filter((n) => n.startsWith('t/')).map((n) => `${root}/${n}`).sort())
    expect(await collect(io, `${root}/t/metadata/`)).toEqual([`${root}/t/metadata/v1.json`, `${root}/t/metadata/v2.json`])
    // A non-slash prefix matches like an S3 key prefix.
    expect(await collect(io, `${root}/t/metadata/v2`)).toEqual([`${root}/t/metadata/v2.json`])
    expect(await collect(io, `${root}/nothing/`)).toEqual([])
  })

  it('reads byte ranges, and writes a file in parts that appears only on close (S3: a multipart upload)', async () => {
    const { io, root } = await make()
    const MiB = 1024 * 1024
    const part = (i: number) => new Uint8Array(3 * MiB).fill(i)
    const sink = await io.openWrite(`${root}/big/f.bin`, { partBytes: 5 * MiB })
    for (let i = 1; i <= 4; i++) await sink.write(part(i))
    // At most one part is held in memory (S3 uploads each 5 MiB as it fills; a local file holds none).
    expect(sink.buffered).toBeLessThan(5 * MiB)
    expect(await io.exists(`${root}/big/f.bin`)).toBe(false)
    expect(await sink.close()).toBe(12 * MiB)
    expect((await io.stat(`${root}/big/f.bin`))?.size).toBe(12 * MiB)
    const range = await io.readRange(`${root}/big/f.bin`, 3 * MiB - 2, 3 * MiB + 2)
    expect([...range]).toEqual([1, 1, 2, 2])
    expect((await io.readRange(`${root}/big/f.bin`, 12 * MiB - 3, 12 * MiB)).length).toBe(3)
    await expect(io.readRange(`${root}/big/none.bin`, 0, 4)).rejects.toBeInstanceOf(FileNotFoundError)
    const aborted = await io.openWrite(`${root}/big/g.bin`, { partBytes: 5 * MiB })
    for (let i = 1; i <= 2; i++) await aborted.write(part(i))
    await aborted.abort()
    expect(await collect(io, `${root}/big/`)).toEqual([`${root}/big/f.bin`])
  })

  it('deletes many files, including missing ones', async () => {
    const { io, root } = await make()
    const paths = Array.from({ length: 7 }, (_, i) => `${root}/d/f${i}`)
    for (const p of paths) await io.write(p, 'x')
    await io.deleteMany([...paths.slice(0, 5), `${root}/d/never-existed`])
    expect(await collect(io, `${root}/d/`)).toEqual(paths.slice(5))
    await io.delete(paths[5]!)
    expect(await io.exists(paths[5]!)).toBe(false)
    expect(await io.exists(paths[6]!)).toBe(true)
  })
})

describe('FileIO on local paths', () => {
  it('accepts file:///abs, file:/abs (Hadoop), bare absolute and file://relative paths for the same file', async () => {
    const io = createFileIO(testAws().clients)
    const dir = tempDir()
    await io.write(`file://${dir}/x/y.txt`, 'one')
    expect(new TextDecoder().decode(await io.read(`file:${dir}/x/y.txt`))).toBe('one')
    expect(new TextDecoder().decode(await io.read(`${dir}/x/y.txt`))).toBe('one')
    const rel = relative(process.cwd(), `${dir}/x/y.txt`)
    expect(new TextDecoder().decode(await io.read(`file://${rel}`))).toBe('one')
  })

  it('leaves no temp files behind after writes', async () => {
    const io = createFileIO(testAws().clients)
    const dir = tempDir()
    for (let i = 0; i < 5; i++) await io.write(`file://${dir}/m/v.json`, `v${i}`)
    expect(readdirSync(`${dir}/m`)).toEqual(['v.json'])
    expect(new TextDecoder().decode(await io.read(`file://${dir}/m/v.json`))).toBe('v4')
  })

  it('rejects schemes it cannot serve', async () => {
    const io = createFileIO(testAws().clients)
    await expect(io.read('gs://bucket/x')).rejects.toThrow(/unsupported path scheme: gs:\/\/bucket\/x/)
  })
})

describe('withPathMap', () => {
  it('serves s3:// paths from a local copy and maps listed paths back', async () => {
    const dir = tempDir()
    const inner = createFileIO(testAws().clients)
    await inner.write(`file://${dir}/tbl/metadata/v1.metadata.json`, '{}')
    await inner.write(`file://${dir}/tbl2/other`, 'not mapped by the tbl prefix')
    const io = withPathMap(inner, [['s3://warehouse/db/tbl', `file://${dir}/tbl`]])
    expect(new TextDecoder().decode(await io.read('s3://warehouse/db/tbl/metadata/v1.metadata.json'))).toBe('{}')
    expect(await collect(io, 's3://warehouse/db/tbl/')).toEqual(['s3://warehouse/db/tbl/metadata/v1.metadata.json'])
    expect((await io.stat('s3://warehouse/db/tbl/metadata/v1.metadata.json'))?.path).toBe('s3://warehouse/db/tbl/metadata/v1.metadata.json')
    await io.write('s3://warehouse/db/tbl/data/f.parquet', 'p')
    expect(await inner.exists(`file://${dir}/tbl/data/f.parquet`)).toBe(true)
  })

  it('maps whole path segments only', async () => {
    const dir = tempDir()
    const bucket = await createTestBucket()
    const inner = createFileIO(testAws().clients)
    await inner.write(`s3://${bucket}/t2/x`, 'from s3')
    const io = withPathMap(inner, [[`s3://${bucket}/t`, `file://${dir}/t`]])
    // s3://<bucket>/t2 is another table: it is not rewritten to the local copy of t.
    expect(new TextDecoder().decode(await io.read(`s3://${bucket}/t2/x`))).toBe('from s3')
    await io.write(`s3://${bucket}/t/x`, 'local')
    expect(new TextDecoder().decode(await inner.read(`file://${dir}/t/x`))).toBe('local')
    expect(await inner.exists(`s3://${bucket}/t/x`)).toBe(false)
  })
})
