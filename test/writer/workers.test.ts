/**
 * The two-worker split (FLOE_WRITER_WORKERS, lib/writer/workers): the same event written with the
 * workers off and on registers the same rows (read back with hyparquet) and the same metrics —
 * files may differ only where a buffer is big enough to be cut into one file per worker; a worker
 * thread that dies mid-encode fails the invocation retryably with nothing registered, and the
 * retry registers every record once. Real threads, DynamoDB Local and s3rver.
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../lib/config.js'
import { ConfigError, WorkerCrashedError, isRetryable } from '../../lib/errors.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { encodePool, MIN_PIECE_ROWS, writerSplit } from '../../lib/writer/workers/index.js'
import { fileMetrics, leafTypes, registeredRows } from './readback.js'
import { checkpoints, kafkaEvent, registered, writerSetup, type EventRecord } from './support.js'

const ROUTES = JSON.stringify({
  defaultNamespace: 'wk',
  routes: [{ topic: 'clicks', table: 'clicks' }, { topic: 'clicks', table: 'by_city' }, { topic: 'orders', table: 'orders' }],
  tables: { by_city: { partitionBy: ['city'] } },
})
const CITIES = ['Oslo', 'Lima', 'Kyiv']

/** Clicks: enough rows that `clicks` is cut into pieces; orders: a small table, one file either way; one bad record. */
function records(): EventRecord[] {
  const out: EventRecord[] = []
  const clicks = 2 * MIN_PIECE_ROWS + 500
  for (let i = 0; i < clicks; i++) {
    const value = { id: i, city: CITIES[i % 3], amount: i / 4, ok: i % 2 === 0, tag: i % 5 === 0 ? null : `t${i % 7}` }
    out.push({ topic: 'clicks', partition: i % 2, offset: Math.floor(i / 2), value })
  }
  for (let i = 0; i < 40; i++) out.push({ topic: 'orders', partition: 0, offset: i * 3, value: { order: i, total: i * 1.5 } })
  out.push({ topic: 'orders', partition: 0, offset: 200, value: '{"order": 1, "total":' })
  return out
}

const sortRows = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))).sort()

async function writeWith(workers: string) {
  const s = await writerSetup({ FLOE_ROUTES: ROUTES, FLOE_WRITER_WORKERS: workers })
  const result = await writeBatch(s.deps, kafkaEvent(records()), { writerId: `w${workers}` })
  const reg = await registered(s.control)
  const files = new Map([...reg].map(([t, r]) => [t, [...r.files.values()].flat()]))
  return { s, result, reg, files, rows: await registeredRows(s) }
}

describe('FLOE_WRITER_WORKERS', () => {
  it('workers on: the same rows, counts, checkpoints and metrics as workers off; only a big buffer is cut into a file per worker', async () => {
    const off = await writeWith('0')
    const on = await writeWith('2')
    expect(off.s.deps.config.writerWorkers).toBe(0)
    expect(on.s.deps.config.writerWorkers).toBe(2)
    for (const k of ['recordsIn', 'deadLetters', 'dropped', 'outcome', 'transactions', 'checkpoints'] as const) expect(on.result[k]).toEqual(off.result[k])
    const rowsOf = (r: typeof off) => r.result.tables.map((t) => [t.table, t.rows]).sort()
    expect(rowsOf(on)).toEqual(rowsOf(off))
    expect(await checkpoints(on.s.control)).toEqual(await checkpoints(off.s.control))
    expect([...on.rows.keys()].sort()).toEqual(['wk.by_city', 'wk.clicks', 'wk.orders'])
    for (const [table, rows] of off.rows) {
      expect(sortRows(on.rows.get(table)!), table).toEqual(sortRows(rows))
      const types = await leafTypes(off.s, table)
      expect(fileMetrics(on.files.get(table)!, types), table).toEqual(fileMetrics(off.files.get(table)!, types))
      const ranges = (r: typeof off) => r.reg.get(table)!.batches.flatMap((b) => b.ranges.map((x) => `${x.topic}-${x.partition}:${x.firstOffset}..${x.nextOffset}=${x.records}`)).sort()
      expect(ranges(on), table).toEqual(ranges(off))
    }
    // clicks (4,500 rows in one buffer) is cut in two; orders and each city of by_city (1,500) are not.
    expect(off.files.get('wk.clicks')).toHaveLength(1)
    expect(on.files.get('wk.clicks')).toHaveLength(2)
    expect(on.files.get('wk.by_city')).toHaveLength(3)
    // A file that is not cut is the same Parquet, byte for byte, whichever thread encoded it.
    const bytes = async (r: typeof off) => Buffer.from(await r.s.io.read(r.files.get('wk.orders')![0]!.filePath)).toString('hex')
    expect(await bytes(on)).toBe(await bytes(off))
  }, 120_000)

  it('a worker thread that dies mid-encode fails the invocation retryably, registers nothing, and the retry registers every record once', async () => {
    // The scanner lane encodes its files on the main thread (and would create `orders` from the warm-up record itself): the encode threads are the present path's.
    const s = await writerSetup({ FLOE_ROUTES: ROUTES, FLOE_WRITER_WORKERS: '1', FLOE_WRITER_SCAN: 'false' })
    const pool = encodePool(1)!
    const event = kafkaEvent(records())
    // Start the thread, then kill it as the first file of the next invocation is handed to it.
    await writeBatch(s.deps, kafkaEvent([{ topic: 'orders', partition: 5, offset: 0, value: { order: -1, total: 0.5 } }]), { writerId: 'warm' })
    const [thread] = pool.threads
    const post = thread!.postMessage.bind(thread)
    thread!.postMessage = (...args: Parameters<typeof post>) => {
      post(...args)
      void thread!.terminate()
    }
    const started = pool.started
    const err = await writeBatch(s.deps, event, { writerId: 'crash' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(WorkerCrashedError)
    expect(isRetryable(err)).toBe(true)
    expect((err as Error).message).toMatch(/FLOE_WRITER_WORKERS.*exited.*retried/)
    expect((await registered(s.control)).get('wk.clicks')).toBeUndefined()
    expect(await checkpoints(s.control)).toEqual({ 'orders-5': '1' })

    const retry = await writeBatch(s.deps, structuredClone(event), { writerId: 'retry' })
    expect(pool.started).toBe(started + 1)
    expect(retry).toMatchObject({ outcome: 'registered', deadLetters: 1 })
    const rows = await registeredRows(s)
    expect(rows.get('wk.clicks')).toHaveLength(2 * MIN_PIECE_ROWS + 500)
    expect(new Set(rows.get('wk.clicks')!.map((r) => r.id)).size).toBe(2 * MIN_PIECE_ROWS + 500)
    expect(rows.get('wk.orders')).toHaveLength(41)
  }, 120_000)

  it('holds at most 2 × workers buffers in encoding at once; the next waits for a release; a buffer is cut only into pieces of MIN_PIECE_ROWS or more', async () => {
    const split = writerSplit(1)!
    const first = await split.acquire()
    await split.acquire()
    let third = false
    const waiting = split.acquire().then((r) => ((third = true), r))
    await new Promise((r) => setTimeout(r, 50))
    expect(third).toBe(false)
    first()
    ;(await waiting)()
    expect(third).toBe(true)
    expect(writerSplit(0)).toBeUndefined()
    const two = writerSplit(2)!
    expect(two.pieces(Array.from({ length: 2 * MIN_PIECE_ROWS - 1 }, (_, i) => i))).toHaveLength(1)
    const cut = two.pieces(Array.from({ length: 2 * MIN_PIECE_ROWS + 1 }, (_, i) => i))
    expect(cut.map((p) => p.length)).toEqual([MIN_PIECE_ROWS + 1, MIN_PIECE_ROWS])
    expect(cut.flat()).toEqual(Array.from({ length: 2 * MIN_PIECE_ROWS + 1 }, (_, i) => i))
  })

  it('is auto, 0 or a thread count up to 8; anything else fails at cold start naming the key', () => {
    const base = { FLOE_WAREHOUSE: 's3://bucket/warehouse' }
    expect(loadConfig({}, { ...base, FLOE_WRITER_WORKERS: '0' }).writerWorkers).toBe(0)
    expect(loadConfig({}, { ...base, FLOE_WRITER_WORKERS: '3' }).writerWorkers).toBe(3)
    expect([0, 2]).toContain(loadConfig({}, base).writerWorkers)
    for (const bad of ['two', '-1', '9', '1.5']) {
      expect(() => loadConfig({}, { ...base, FLOE_WRITER_WORKERS: bad }), bad).toThrow(ConfigError)
      expect(() => loadConfig({}, { ...base, FLOE_WRITER_WORKERS: bad }), bad).toThrow(/FLOE_WRITER_WORKERS/)
    }
  })
})
