import { describe, expect, it } from 'vitest'
import type { Context } from 'aws-lambda'
import { createCommitterHandler, deadlineOf } from '../../functions/committer.js'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { icebergRead } from 'icebird'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import type { FileIO } from '../../lib/io/types.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { testCommit } from '../commit/context.js'
import { kafkaEvent, writerSetup } from '../writer/support.js'

const context = { awsRequestId: 'req-1', functionName: 'floe-committer', getRemainingTimeInMillis: () => 60_000 } as unknown as Context

describe('committer handler', () => {
  it('commits pending batches of every table and returns a JSON-safe summary', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    await t.register(name, { count: 3 })
    await t.register(name, { partition: 2, count: 4 })
    const handler = createCommitterHandler(t.deps)
    const summary = await handler({}, context)
    expect(summary).toMatchObject({ tables: 1, committed: 1, failures: 0, batches: 2, results: [{ table: name, status: 'committed', batches: 2 }] })
    expect(summary.results[0]!.snapshotId).toMatch(/^\d+$/)
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary)
    expect(await handler({}, context)).toMatchObject({ tables: 0, failures: 0 })
  })
})

describe('deadlineOf', () => {
  it('stops starting tables in the last 20% of the invocation, at least 10 s before the timeout', () => {
    expect(deadlineOf({ getRemainingTimeInMillis: () => 300_000 }, 0)).toBe(240_000)
    expect(deadlineOf({ getRemainingTimeInMillis: () => 30_000 }, 0)).toBe(20_000)
    expect(deadlineOf(undefined, 0)).toBeUndefined()
  })
})

describe('writer → committer, end to end', () => {
  it('batches from several writer invocations become one snapshot that icebird and our reader read exactly', async () => {
    const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }] }) })
    const recs = (offsets: number[], partition: number) =>
      offsets.map((o) => ({ topic: 'events', partition, offset: o, value: { id: partition * 1000 + o, name: `n${o}` } }))
    await writeBatch(s.deps, kafkaEvent([...recs([0, 1, 2], 0), ...recs([0, 1], 1)]), { writerId: 'w1' })
    await writeBatch(s.deps, kafkaEvent(recs([3, 4, 7], 0)), { writerId: 'w2' })
    // A redelivery of the first event registers nothing new.
    await writeBatch(s.deps, kafkaEvent([...recs([0, 1, 2], 0), ...recs([0, 1], 1)]), { writerId: 'w3' })
    await writeBatch(s.deps, kafkaEvent(recs([2, 5], 1)), { writerId: 'w4' })
    const deps = { control: s.control, catalog: s.catalog, io: s.io, config: s.deps.config }
    const summary = await createCommitterHandler(deps)({}, context)
    expect(summary).toMatchObject({ tables: 1, committed: 1, failures: 0, batches: 3, records: 10 })

    const { metadata, metadataLocation } = await s.catalog.loadTable({ namespace: 'db', name: 'events' })
    expect(metadata.snapshots).toHaveLength(1)
    expect(currentSnapshot(metadata)!.summary['floe.offsets.test']).toBe('{"events-0":8,"events-1":6}')
    const expectedIds = [0, 1, 2, 3, 4, 7, 1000, 1001, 1002, 1005]
    const entries = await liveDataFiles(s.io, metadata)
    expect(entries.reduce((n, e) => n + e.dataFile.recordCount, 0)).toBe(10)
    const ours: number[] = []
    for (const e of entries) {
      const bytes = await s.io.read(e.dataFile.filePath)
      const rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors })
      ours.push(...rows.map((r) => Number(r.id)))
    }
    expect(ours.sort((a, b) => a - b)).toEqual(expectedIds)

    const rows = await withS3Fetch(s.io, () =>
      icebergRead({ tableUrl: metadata.location, metadataFileName: metadataLocation.slice(metadataLocation.lastIndexOf('/') + 1) }),
    )
    expect(rows.map((r: Record<string, unknown>) => Number(r.id)).sort((a: number, b: number) => a - b)).toEqual(expectedIds)
  })
})

/** icebird fetches `https://<bucket>.s3.amazonaws.com/<key>`: serve those from s3rver through our FileIO (HEAD and Range included). */
async function withS3Fetch<T>(io: FileIO, fn: () => Promise<T>): Promise<T> {
  const real = globalThis.fetch
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    const m = /^https:\/\/([^./]+)\.s3\.amazonaws\.com\/(.*)$/.exec(url)
    if (!m) return real(input, init)
    const bytes = await io.read(`s3://${m[1]}/${decodeURIComponent(m[2]!)}`)
    if (init?.method === 'HEAD') return new Response(null, { headers: { 'content-length': String(bytes.length) } })
    const range = new Headers(init?.headers).get('range')
    const r = range ? /bytes=(\d+)-(\d*)/.exec(range) : null
    if (!r) return new Response(bytes, { headers: { 'content-length': String(bytes.length) } })
    const start = Number(r[1])
    const end = r[2] ? Number(r[2]) + 1 : bytes.length
    return new Response(bytes.slice(start, end), { status: 206, headers: { 'content-length': String(end - start) } })
  }) as typeof fetch
  try {
    return await fn()
  } finally {
    globalThis.fetch = real
  }
}
