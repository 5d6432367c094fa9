/**
 * Registration groups. One registration is ONE DynamoDB transaction of at most 100 items: one
 * checkpoint update per Kafka partition plus one pending-batch put per table. A batch spanning
 * more (many partitions fanned out to many tables) is split into groups of whole partitions,
 * each registered by its own transaction and each with its own files — so a table touched by
 * two groups gets one file per (table, partition value) PER GROUP. Every group is fenced on its
 * own partitions' checkpoints, so the split keeps exactly-once: if a later group fails, the
 * mapping retries the batch and the records of already registered groups are dropped as below
 * their checkpoints.
 *
 * Greedy in the event's partition order: a partition joins the current group while
 * partitions + distinct tables stay within the limit. A single partition routed to more tables
 * than the limit allows cannot be registered atomically and fails the batch with a clear error.
 */
import { FloeError } from '../errors.js'

export interface GroupInput {
  /** "topic-partition" */
  key: string
  /** Tables this partition's records go to. */
  tables: Set<string>
}

export function planGroups(partitions: readonly GroupInput[], maxItems = 100): string[][] {
  const groups: string[][] = []
  let current: string[] = []
  let tables = new Set<string>()
  for (const p of partitions) {
    if (p.tables.size + 1 > maxItems) {
      throw new FloeError(
        `partition ${p.key} routes to ${p.tables.size} tables in one batch; one registration holds at most ${maxItems - 1} tables per partition (lower the fan-out or the mapping's BatchSize)`,
      )
    }
    const union = new Set([...tables, ...p.tables])
    if (current.length > 0 && current.length + 1 + union.size > maxItems) {
      groups.push(current)
      current = []
      tables = new Set(p.tables)
    } else tables = union
    current.push(p.key)
  }
  if (current.length > 0) groups.push(current)
  return groups
}
