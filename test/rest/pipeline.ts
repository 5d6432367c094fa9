/**
 * A Floe pipeline (the writer and the committer handler's code) whose catalog is a REST catalog:
 * DynamoDB Local + s3rver for the control table and files, the REST server for table pointers.
 */
import type { Context } from 'aws-lambda'
import { createCommitterHandler } from '../../functions/committer.js'
import type { CommitterSummary } from '../../lib/commit/summary.js'
import type { Catalog } from '../../lib/catalog/types.js'
import type { SettingName } from '../../lib/config.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { kafkaEvent, writerSetup, type EventRecord, type WriterSetup } from '../writer/support.js'

const context = { awsRequestId: 'rest', functionName: 'floe-committer', getRemainingTimeInMillis: () => 120_000 } as unknown as Context

export interface RestPipeline extends Omit<WriterSetup, 'catalog'> {
  catalog: Catalog
  write(records: EventRecord[]): Promise<void>
  commit(): Promise<CommitterSummary>
}

/** `catalog(setup)` builds the pipeline's catalog (it may wrap a RestCatalog to inject a second writer). */
export async function restPipeline(settings: Partial<Record<SettingName, string>>, catalog: (s: WriterSetup) => Catalog): Promise<RestPipeline> {
  const s = await writerSetup(settings)
  const rest = catalog(s)
  const deps = { ...s.deps, catalog: rest }
  let invocation = 0
  return {
    ...s,
    deps,
    catalog: rest,
    async write(records) {
      const result = await writeBatch(deps, kafkaEvent(records), { writerId: `w${++invocation}` })
      if (result.deadLetters) throw new Error(`test data must not dead-letter: ${JSON.stringify(result)}`)
    },
    commit: () => createCommitterHandler({ control: s.control, catalog: rest, io: s.io, config: s.deps.config })({}, context),
  }
}
