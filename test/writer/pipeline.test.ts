/**
 * The writer end to end against DynamoDB Local + s3rver and helper D's DynamoDbCatalog: fenced
 * registration (DESIGN.md invariant 2), dead letters (8), back pressure (5).
 */
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { describe, expect, it } from 'vitest'
import { noteBacklog } from '../../lib/control/backlog.js'
import { createControlContext } from '../../lib/control/context.js'
import { BackpressureError } from '../../lib/errors.js'
import { countedClients, RequestCounter } from '../helpers/request-counter.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { checkpoints, deadLetterLines, kafkaEvent, listAll, registered, writerSetup, type EventRecord } from './support.js'

const ROUTES = JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }] })

const recs = (offsets: number[], partition = 0, topic = 'events'): EventRecord[] =>
  offsets.map((o) => ({ topic, partition, offset: o, value: { id: o, name: `n${o}`, ts: '2024-05-01T10:00:00Z' } }))

async function dataFiles(s: Awaited<ReturnType<typeof writerSetup>>): Promise<string[]> {
  return (await listAll(s.io, `${s.warehouse}/`)).filter((p) => p.endsWith('.parquet'))
}

describe('writeBatch', () => {
  it('registers the same event delivered twice only once', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const event = kafkaEvent([...recs([0, 1, 2]), ...recs([5, 6], 1)])
    const first = await writeBatch(s.deps, event, { writerId: 'w1' })
    const second = await writeBatch(s.deps, structuredClone(event), { writerId: 'w2' })
    expect(first.outcome).toBe('registered')
    expect(first.tables).toMatchObject([{ table: 'db.events', rows: 5, files: 1 }])
    expect(second).toMatchObject({ outcome: 'nothing-new', belowCheckpoint: 5, tables: [] })
    const reg = await registered(s.control)
    expect([...reg.keys()]).toEqual(['db.events'])
    expect(reg.get('db.events')!.batches).toHaveLength(1)
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '3', 'events-1': '7' })
    expect(await dataFiles(s)).toHaveLength(1)
  })

  it('registers the records of two concurrent overlapping invocations once, and the loser leaves no files', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    // Create the table first so both racers write into the same schema.
    await writeBatch(s.deps, kafkaEvent(recs([0])), { writerId: 'setup' })
    const zombie = kafkaEvent(recs([1, 2, 3, 4]))
    const retry = kafkaEvent(recs([1, 2, 3, 4, 5, 6]))
    const results = await Promise.all([writeBatch(s.deps, zombie, { writerId: 'zombie' }), writeBatch(s.deps, retry, { writerId: 'retry' })])
    expect(results.map((r) => r.outcome).sort()).toContain('registered')
    const batches = (await registered(s.control)).get('db.events')!
    const covered = batches.batches.flatMap((b) => b.ranges.map((r) => [r.firstOffset, r.nextOffset]))
    // Offsets 0..6 covered exactly once, whatever the interleaving.
    const offsets = covered.flatMap(([a, b]) => Array.from({ length: Number(b! - a!) }, (_, i) => a! + BigInt(i))).sort()
    expect(offsets).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n])
    expect(batches.batches.reduce((n, b) => n + b.recordCount, 0)).toBe(7)
    const registeredPaths = [...batches.files.values()].flat().map((f) => f.filePath).sort()
    expect(await dataFiles(s)).toEqual(registeredPaths)
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '7' })
  })

  it('registers the rest when another writer registered part of its batch while it was writing', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(recs([0])), { writerId: 'setup' })
    let reached!: () => void
    const reachedP = new Promise<void>((r) => (reached = r))
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    const slow = {
      ...s.deps,
      decoders: {
        decodeValue: async (rec: Parameters<typeof s.deps.decoders.decodeValue>[0]) => {
          reached()
          await gate
          return s.deps.decoders.decodeValue(rec)
        },
      },
    }
    // The slow writer has read the checkpoint (1) when the fast one registers 1..4.
    const slowRun = writeBatch(slow, kafkaEvent(recs([1, 2, 3, 4, 5, 6])), { writerId: 'slow' })
    await reachedP
    const fast = await writeBatch(s.deps, kafkaEvent(recs([1, 2, 3, 4])), { writerId: 'fast' })
    open()
    const late = await slowRun
    expect(fast.outcome).toBe('registered')
    expect(late).toMatchObject({ outcome: 'registered', tables: [{ table: 'db.events', rows: 2, files: 1 }] })
    const reg = (await registered(s.control)).get('db.events')!
    const ranges = reg.batches.flatMap((b) => b.ranges.map((r) => [r.firstOffset, r.nextOffset, r.records])).sort((a, b) => Number((a[0] as bigint) - (b[0] as bigint)))
    expect(ranges).toEqual([
      [0n, 1n, 1],
      [1n, 5n, 4],
      [5n, 7n, 2],
    ])
    expect(await dataFiles(s)).toEqual([...reg.files.values()].flat().map((f) => f.filePath).sort())
  })

  it('splits a batch spanning more partitions than one transaction holds into fenced groups', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const records = Array.from({ length: 150 }, (_, p) => recs([p * 10, p * 10 + 3], p)).flat()
    const r = await writeBatch(s.deps, kafkaEvent(records))
    expect(r.transactions).toBe(2)
    // One file per (table, partition value) per group: two groups → two files.
    expect(r.tables).toMatchObject([{ table: 'db.events', rows: 300, files: 2 }])
    const cps = await checkpoints(s.control)
    expect(Object.keys(cps)).toHaveLength(150)
    expect(cps['events-149']).toBe('1494')
    expect((await registered(s.control)).get('db.events')!.batches).toHaveLength(2)
  })

  it('registers only the new records of a redelivered batch that starts below the checkpoint', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(recs([0, 1, 2, 3, 4])))
    const again = await writeBatch(s.deps, kafkaEvent(recs([3, 4, 5, 6, 7])))
    expect(again).toMatchObject({ outcome: 'registered', belowCheckpoint: 2 })
    const reg = (await registered(s.control)).get('db.events')!
    const second = reg.batches.find((b) => b.ranges[0]!.firstOffset === 5n)!
    expect(second.ranges).toMatchObject([{ topic: 'events', partition: 0, firstOffset: 5n, nextOffset: 8n, records: 3 }])
    const rows = await readRows(s, reg.files.get(second.batchId)![0]!.filePath)
    expect(rows.map((r) => r.id)).toEqual([5n, 6n, 7n])
  })

  it('handles offsets with gaps: the checkpoint is the last delivered offset + 1', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(recs([10, 13, 20])))
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '21' })
    const r = await writeBatch(s.deps, kafkaEvent(recs([21, 35, 36])))
    expect(r.outcome).toBe('registered')
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '37' })
    const ranges = [...(await registered(s.control)).get('db.events')!.batches].flatMap((b) => b.ranges).sort((a, b) => Number(a.firstOffset - b.firstOffset))
    expect(ranges.map((x) => [x.firstOffset, x.nextOffset, x.records])).toEqual([
      [10n, 21n, 3],
      [21n, 37n, 3],
    ])
  })

  it('dead-letters invalid JSON, a wrong-typed field and an unknown topic, registers the good records, and the counts reconcile', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 1, n: 5 } }]))
    const event = kafkaEvent([
      { topic: 'events', partition: 0, offset: 1, value: { id: 2, n: 6 } },
      { topic: 'events', partition: 0, offset: 2, value: '{"id": 3, "n": ' },
      { topic: 'events', partition: 0, offset: 3, value: { id: 4, n: 'not a number' } },
      { topic: 'events', partition: 0, offset: 4, value: { id: 5, n: 7 } },
      { topic: 'elsewhere', partition: 2, offset: 40, value: { id: 6 } },
    ])
    const r = await writeBatch(s.deps, event)
    expect(r.outcome).toBe('registered')
    expect(r.tables).toMatchObject([{ table: 'db.events', rows: 2 }])
    expect(r.deadLetters).toBe(3)
    expect(r.recordsIn).toBe(r.tables[0]!.rows + r.deadLetters + r.dropped + r.belowCheckpoint)
    const lines = await deadLetterLines(s.io, s.deps.config.dlq)
    expect(lines.map((l) => [l.topic, l.offset, l.stage])).toEqual([
      ['elsewhere', '40', 'route'],
      ['events', '2', 'decode'],
      ['events', '3', 'coerce'],
    ])
    const byOffset = Object.fromEntries(lines.map((l) => [l.offset as string, l]))
    expect(byOffset['2']!.reason).toMatch(/JSON/)
    expect(byOffset['3']).toMatchObject({ table: 'db.events' })
    expect(byOffset['3']!.reason).toMatch(/field 'n' expected long, got string "not a number"|field 'n'.*not a number/)
    expect(byOffset['40']!.reason).toMatch(/no route matched topic 'elsewhere'/)
    expect(Buffer.from(byOffset['2']!.value as string, 'base64').toString()).toBe('{"id": 3, "n": ')
    // Every partition advanced, including the one whose only record was a dead letter.
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '5', 'elsewhere-2': '41' })
    // A retry overwrites the dead letters instead of adding more.
    await writeBatch(s.deps, structuredClone(event))
    expect(await deadLetterLines(s.io, s.deps.config.dlq)).toHaveLength(3)
  })

  it('writes a record routed to several tables into each, in one registration, and counts dropped records', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({
        defaultNamespace: 'db',
        routes: [{ topic: 'events', field: 'type', match: { signups: '^signup$', everything: '.*' } }],
        unrouted: 'drop',
      }),
    })
    const r = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'events', partition: 0, offset: 0, value: { type: 'signup', id: 1 } },
        { topic: 'events', partition: 0, offset: 1, value: { type: 'login', id: 2 } },
        { topic: 'events', partition: 0, offset: 2, value: { id: 3 } },
      ]),
    )
    expect(r).toMatchObject({ outcome: 'registered', transactions: 1, dropped: 1, deadLetters: 0 })
    expect(r.tables.map((t) => [t.table, t.rows]).sort()).toEqual([
      ['db.everything', 2],
      ['db.signups', 1],
    ])
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '3' })
  })

  it('after a registration with an unknown outcome, keeps its files and the retry registers the records once', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(recs([0])))
    // The transaction goes through but the answer is lost (a timeout after sending).
    const doc = s.control.doc
    let lost = false
    const flaky = new Proxy(doc, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver)
        return async (cmd: { constructor: { name: string } }) => {
          const out = await target.send(cmd as never)
          if (cmd.constructor.name === 'TransactWriteCommand' && !lost) {
            lost = true
            throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' })
          }
          return out
        }
      },
    })
    const event = kafkaEvent(recs([1, 2, 3]))
    await expect(writeBatch({ ...s.deps, control: { ...s.control, doc: flaky } }, event)).rejects.toThrow(/socket hang up/)
    // The committed batch's files are still there.
    const reg = (await registered(s.control)).get('db.events')!
    for (const f of [...reg.files.values()].flat()) expect(await s.io.exists(f.filePath)).toBe(true)
    // The mapping retries: nothing new, nothing registered twice.
    const retry = await writeBatch(s.deps, structuredClone(event))
    expect(retry).toMatchObject({ outcome: 'nothing-new', belowCheckpoint: 3 })
    const after = (await registered(s.control)).get('db.events')!
    expect(after.batches.reduce((n, b) => n + b.recordCount, 0)).toBe(4)
  })

  it('fails with a retryable BackpressureError before writing anything when a table has too many pending batches', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES, FLOE_MAX_PENDING_BATCHES: '1' })
    await writeBatch(s.deps, kafkaEvent(recs([0])))
    await writeBatch(s.deps, kafkaEvent(recs([1])))
    const before = await dataFiles(s)
    const err = await writeBatch(s.deps, kafkaEvent(recs([2]))).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BackpressureError)
    expect((err as BackpressureError).retryable).toBe(true)
    expect((err as Error).message).toMatch(/table db.events has 2 pending batches, more than FLOE_MAX_PENDING_BATCHES=1/)
    expect(await dataFiles(s)).toEqual(before)
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '2' })
  })

  it("reads the back-pressure note of a scanned topic's table with the checkpoints, not in a request of its own", async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES, FLOE_MAX_PENDING_BATCHES: '3' })
    await writeBatch(s.deps, kafkaEvent(recs([0])))
    const counter = new RequestCounter()
    const deps = { ...s.deps, control: createControlContext(s.deps.config, countedClients(counter).doc, s.io) }
    await noteBacklog(s.control, 'test', 'db.events', 2)
    const ok = await writeBatch(deps, kafkaEvent(recs([1, 2])))
    expect(ok).toMatchObject({ outcome: 'registered', recordsScanned: 2 })
    await noteBacklog(s.control, 'test', 'db.events', 5)
    const err = await writeBatch(deps, kafkaEvent(recs([3]))).catch((e: unknown) => e)
    expect((err as Error).message).toMatch(/table db.events has 5 pending batches, more than FLOE_MAX_PENDING_BATCHES=3/)
    // Two invocations: one BatchGetItem each for the checkpoint and the note, no GetItem, no count over the shards.
    expect(counter.operations.get('ddb.BatchGetItemCommand')).toBe(2)
    expect(counter.operations.get('ddb.GetItemCommand')).toBeUndefined()
    expect(counter.operations.get('ddb.QueryCommand')).toBeUndefined()
    expect(counter.ddbKeys.get('backlog#test#db.events')?.requests).toBe(2)
  })
})

async function readRows(s: Awaited<ReturnType<typeof writerSetup>>, path: string): Promise<Record<string, unknown>[]> {
  const bytes = await s.io.read(path)
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  return (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[]
}
