/**
 * The writer Lambda handler: the middy wrapper around writeBatch built by createWriterHandler
 * (DynamoDB Local + s3rver), and the cold start that fails on a bad setting.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigError, FloeError } from '../../lib/errors.js'
import { metrics } from '../../lib/log.js'
import { createWriterHandler } from '../../functions/writer.js'
import { checkpoints, kafkaEvent, writerSetup } from '../writer/support.js'
import { lambdaContext } from '../writer/readback.js'

const context = (id: string) => lambdaContext(id)

const ROUTES = JSON.stringify({ defaultNamespace: 'db', routes: [{ table: '{topic}' }] })

describe('writer handler', () => {
  const saved = { ...process.env }
  afterEach(() => {
    process.env = { ...saved }
    vi.resetModules()
  })

  it('writes a batch and answers with a summary, naming files after the request id', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const handler = createWriterHandler({ ...s.deps, router: undefined })
    const event = kafkaEvent([
      { topic: 'clicks', partition: 0, offset: 3, value: { a: 1 } },
      { topic: 'clicks', partition: 0, offset: 4, value: 'not json' },
    ])
    const out = await handler(event, context('req-123'))
    expect(out).toMatchObject({ outcome: 'registered', recordsIn: 2, deadLetters: 1, tables: [{ table: 'db.clicks', rows: 1, files: 1 }] })
    expect(await checkpoints(s.control)).toEqual({ 'clicks-0': '5' })
    const files: string[] = []
    for await (const f of s.io.list(`${s.warehouse}/db.db/clicks/data/`)) files.push(f.path)
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/\/req-123-00000-[0-9a-f-]{36}\.parquet$/)
  })

  it('emits the batch metrics once per invocation, with their units', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const handler = createWriterHandler(s.deps)
    const added = vi.spyOn(metrics, 'addMetric')
    try {
      await handler(kafkaEvent([{ topic: 'clicks', partition: 0, offset: 3, value: { a: 1 } }, { topic: 'clicks', partition: 0, offset: 4, value: 'x' }]), context('m'))
      const emitted = Object.fromEntries(added.mock.calls.map(([name, unit, value]) => [name, { unit, value }]))
      expect(added.mock.calls.map(([name]) => name)).toEqual(['RecordsIn', 'RecordsWritten', 'BytesWritten', 'FilesWritten', 'DeadLetters', 'RecordsDropped', 'RecordsBelowCheckpoint', 'RecordsScanned', 'FlushesBudget', 'FlushesTargetSize', 'FlushesEnd', 'PeakBufferedBytes', 'WriteDuration'])
      expect(emitted).toMatchObject({
        RecordsIn: { unit: 'Count', value: 2 },
        RecordsWritten: { unit: 'Count', value: 1 },
        FilesWritten: { unit: 'Count', value: 1 },
        DeadLetters: { unit: 'Count', value: 1 },
        RecordsDropped: { unit: 'Count', value: 0 },
        FlushesEnd: { unit: 'Count', value: 1 },
        BytesWritten: { unit: 'Bytes' },
        PeakBufferedBytes: { unit: 'Bytes' },
        WriteDuration: { unit: 'Milliseconds' },
      })
      expect(emitted.BytesWritten!.value).toBeGreaterThan(0)
    } finally {
      added.mockRestore()
    }
  })

  it('emits only the duration when a batch fails for another reason than back pressure', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const handler = createWriterHandler({ ...s.deps, control: { ...s.control, table: 'no-such-control-table' } })
    const added = vi.spyOn(metrics, 'addMetric')
    try {
      await expect(handler(kafkaEvent([{ topic: 'clicks', partition: 0, offset: 1, value: { a: 1 } }]), context('r'))).rejects.toThrow(/no-such-control-table/)
      expect(added.mock.calls.map(([name, unit]) => [name, unit])).toEqual([['WriteDuration', 'Milliseconds']])
    } finally {
      added.mockRestore()
    }
  })

  it('lets infrastructure errors propagate so the mapping retries the batch', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const handler = createWriterHandler({ ...s.deps, control: { ...s.control, table: 'no-such-control-table' } })
    await expect(handler(kafkaEvent([{ topic: 'clicks', partition: 0, offset: 1, value: { a: 1 } }]), context('r'))).rejects.toThrow(
      /no-such-control-table/,
    )
  })

  it('rejects a malformed event with an EventShapeError', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const handler = createWriterHandler(s.deps)
    const err = await handler({ eventSource: 'aws:sqs', Records: [] }, context('r')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(FloeError)
    expect((err as Error).name).toBe('EventShapeError')
    expect((err as Error).message).toMatch(/eventSource is string "aws:sqs"/)
  })

  it('fails the cold start with a ConfigError naming the bad setting', async () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'floe-writer'
    process.env.FLOE_WAREHOUSE = 's3://bucket/wh'
    process.env.FLOE_MEMORY_BUDGET_MB = 'lots'
    const err = await import('../../functions/writer.js').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).name).toBe(ConfigError.name)
    expect((err as Error).message).toMatch(/^FLOE_MEMORY_BUDGET_MB: .*"lots"/)
  })
})
