/**
 * Floe's side of the interop suite: a pipeline (writer + committer, the real handlers' code) on
 * DynamoDB Local + s3rver whose catalog table and warehouse the engines are configured on.
 */
import type { Context } from 'aws-lambda'
import { createCommitterHandler } from '../../functions/committer.js'
import type { SettingName } from '../../lib/config.js'
import { parseTableId } from '../../lib/catalog/index.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { kafkaEvent, writerSetup, type EventRecord, type WriterSetup } from '../writer/support.js'
import type { Json } from './engine.js'

const context = { awsRequestId: 'interop', functionName: 'floe-committer', getRemainingTimeInMillis: () => 120_000 } as unknown as Context

export interface Floe extends WriterSetup {
  /** One writer invocation (an MSK event of these records); values that are Uint8Array are sent as raw bytes. Exactly `deadLetters` records may be dead letters (default none). */
  write(records: EventRecord[], deadLetters?: number): Promise<void>
  /** One committer run; returns the number of records it committed. */
  commit(): Promise<number>
  metadataLocation(table: string): Promise<string>
  /** The current snapshot's summary. */
  summary(table: string): Promise<Record<string, string>>
}

export async function startFloe(settings: Partial<Record<SettingName, string>>): Promise<Floe> {
  const s = await writerSetup(settings)
  let invocation = 0
  return {
    ...s,
    async write(records, deadLetters = 0) {
      const event = kafkaEvent(records.map((r) => (r.value instanceof Uint8Array ? { ...r, value: '' } : r))) as { records: Record<string, { offset: number; value: string }[]> }
      const raw = new Map(records.filter((r) => r.value instanceof Uint8Array).map((r) => [`${r.topic}-${r.partition}-${r.offset}`, r.value as Uint8Array]))
      for (const [tp, list] of Object.entries(event.records))
        for (const r of list) {
          const bytes = raw.get(`${tp}-${r.offset}`)
          if (bytes) r.value = Buffer.from(bytes).toString('base64')
        }
      const result = await writeBatch(s.deps, event, { writerId: `w${++invocation}` })
      if ((result.deadLetters ?? 0) !== deadLetters) throw new Error(`expected ${deadLetters} dead letters: ${JSON.stringify(result)}`)
    },
    async commit() {
      const summary = await createCommitterHandler({ control: s.control, catalog: s.catalog, io: s.io, config: s.deps.config })({}, context)
      if (summary.failures) throw new Error(`commit failed: ${JSON.stringify(summary)}`)
      return summary.records
    },
    async metadataLocation(table) {
      return (await s.catalog.loadTable(parseTableId(table))).metadataLocation
    },
    async summary(table) {
      return currentSnapshot((await s.catalog.loadTable(parseTableId(table))).metadata)?.summary ?? {}
    },
  }
}

/** Rows sorted by a numeric key, for order-free comparison. */
export const sortBy = <T extends Record<string, Json>>(rows: T[], key: string): T[] => [...rows].sort((a, b) => Number(a[key]) - Number(b[key]))

/** One committer run that must commit exactly `records` records (for setup code outside a test). */
export async function commitExactly(floe: Floe, records: number): Promise<void> {
  const got = await floe.commit()
  if (got !== records) throw new Error(`expected the committer to commit ${records} records, it committed ${got}`)
}
