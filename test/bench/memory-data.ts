/** The memory bench's input: 200-column records routed by `kind` to dynamic tables, identity-partitioned by `slot`. */
import type { KafkaEvent } from '../../lib/local/kafka-log.js'
import { cutEvents, wideRecord } from './data.js'

export const memoryRoutes = (namespace: string) => ({
  routes: [{ tableFromField: 'kind', namespace }],
  tableDefaults: { partitionBy: ['slot'] },
})

/** Record i goes to table i % tables, slot ⌊i / tables⌋ % slots: every (table, slot) pair is hit once before any twice. */
export function memoryRecord(i: number, tables: number, slots: number): Record<string, unknown> {
  return wideRecord(i, { kind: `t${String(i % tables).padStart(2, '0')}`, slot: Math.floor(i / tables) % slots })
}

/** The first ≤ 6 MB event of such records. */
export function memoryEvent(tables: number, slots: number, limit = Infinity): { event: KafkaEvent; records: number; jsonBytes: number } {
  const enc = new TextEncoder()
  const log = []
  let jsonBytes = 0
  // Enough records to overfill one 6 MB event; cutEvents keeps the first full one.
  for (let i = 0; i < Math.min(limit, 3000); i++) {
    const value = enc.encode(JSON.stringify(memoryRecord(i, tables, slots)))
    log.push({ topic: 'mem', partition: 0, offset: BigInt(i), timestamp: 1_714_557_600_000 + i, key: null, value })
  }
  const event = cutEvents(log)[0]!
  const records = Object.values(event.records).reduce((n, l) => n + l.length, 0)
  for (const r of log.slice(0, records)) jsonBytes += r.value.length
  return { event, records, jsonBytes }
}
