/**
 * Evolving a table so this batch's records fit (./evolution.ts has the rules and sources), the
 * new schema committed through the catalog before any row is written. On CommitConflictError
 * (another writer, or an outside engine, changed the table first) reload and plan again on top
 * of their schema, so both changes land (lib/catalog's reload-and-rebase loop).
 */
import { commitWithRebase, type LoadedTable, type Rebased } from '../catalog/index.js'
import { type TableMetadata, addSchema } from '../iceberg/index.js'
import { applyColumnHints, inferSchema, maxFieldId } from '../schema/index.js'
import { immediately } from '../retry/index.js'
import type { Coerced } from './columnar/coerce.js'
import { evolutionInput, planEvolution, tableView } from './evolution.js'
import { hasKafkaColumn, kafkaField } from './kafka-column.js'
import { keyType, literalValues } from './table-create.js'
import { refreshed, type Sample, type TableState } from './table-state.js'
import type { WriterDeps } from './types.js'

/** `coerced`: each sample's row as the current schema's coercer made it while looking (kept for buildRow while the schema does not change). */
export async function evolveTable(deps: WriterDeps, state: TableState, samples: Sample[], coerced: (sample: Sample, result: Coerced) => void): Promise<void> {
  const { catalog, config } = deps
  const input = evolutionInput(samples, state.coerce, coerced)
  const kafkaMissing = state.kafka.length > 0 && !hasKafkaColumn(state.schema)
  if (input.declared.length === 0 && input.plain.length === 0 && input.failing.length === 0 && !kafkaMissing) return
  // New fields of JSON records are typed from their literals (`1.0` a double) and the table's `columns` hints.
  const bySample = new Map(samples.map((s) => [s.value as object, s]))
  const maxDepth = config.limits.maxDepth
  const infer = (values: Record<string, unknown>[]) =>
    applyColumnHints(inferSchema(literalValues(deps, values.map((v) => bySample.get(v)!)), { maxDepth, formatVersion: state.metadata['format-version'] }), state.options.columns)
  const build = (base: LoadedTable, attempt: number): Rebased<TableMetadata | undefined> => {
    if (attempt > 0) Object.assign(state, refreshed(state, base.metadata, base.metadataLocation))
    const plan = planEvolution(tableView(state), input, infer)
    state.rejected = new Map([...plan.rejected].map(([value, reason]) => [bySample.get(value)!.record, reason]))
    let target = plan.target
    if (state.kafka.length && !hasKafkaColumn(target ?? state.schema)) {
      const schema = target ?? state.schema
      const { field } = kafkaField(state.kafka, Math.max(state.metadata['last-column-id'], maxFieldId(schema)) + 1, keyType(deps, samples))
      target = { ...schema, fields: [...schema.fields, field] }
    }
    if (target === undefined) return { plan: undefined }
    const metadata = addSchema(state.metadata, target)
    return { metadata, plan: metadata }
  }
  // A conflict reloads and plans again at once (FLOE_COMMIT_RETRIES times): the batch waits on it.
  // An unknown outcome is not rechecked: CommitStateUnknownError fails the batch, and the
  // mapping's retry loads the table as it is.
  const { plan: metadata, committed } = await commitWithRebase(catalog, state.id, build, {
    policy: immediately(config.commitRetries + 1),
    base: { metadata: state.metadata, metadataLocation: state.metadataLocation },
  })
  if (metadata === undefined || committed === undefined) return
  Object.assign(state, refreshed(state, metadata, committed.metadataLocation))
  state.evolvedToSchemaId = state.schema['schema-id']
}
