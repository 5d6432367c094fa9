/** A committer on the local endpoints: control table, DynamoDB catalog, one Iceberg table per call to `table()`. */
import { randomUUID } from 'node:crypto'
import type { FloeConfig } from '../../lib/config.js'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import type { Catalog } from '../../lib/catalog/types.js'
import { parseTableId } from '../../lib/catalog/index.js'
import type { CommitDeps } from '../../lib/commit/types.js'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints } from '../../lib/control/checkpoints.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import { createTestCatalogTable, testAws } from '../helpers/aws.js'
import { batchInput, fakeDataFile, range, testControl } from '../control/context.js'

export interface TestCommit {
  deps: CommitDeps
  catalog: Catalog
  config: FloeConfig
  /** Create `ns.<unique>` and return its name and location. */
  table(): Promise<{ name: string; location: string }>
  /** Register one batch of `files` files on one partition, from the current checkpoint, advancing it by `count`. */
  register(table: string, opts?: { topic?: string; partition?: number; count?: number; files?: number; maxTimestamp?: number; specId?: number; partitionTuple?: DataFile['partition'] }): Promise<DataFile[]>
  /** Paths of the live data files of the table's current snapshot (with duplicates, if any). */
  livePaths(table: string): Promise<string[]>
}

export async function testCommit(overrides: Partial<FloeConfig> = {}): Promise<TestCommit> {
  const { ctx, config } = await testControl(overrides)
  const catalog = new DynamoDbCatalog({ ddb: testAws().ddb, tableName: await createTestCatalogTable(), warehouse: config.warehouse, io: ctx.io })
  await catalog.createNamespace('db')
  const deps: CommitDeps = { control: ctx, catalog, io: ctx.io, config }
  const locations = new Map<string, string>()
  return {
    deps,
    catalog,
    config,
    async table() {
      const name = `db.t_${randomUUID().slice(0, 8)}`
      const { metadata } = await catalog.createTable(parseTableId(name), {
        schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
      })
      locations.set(name, metadata.location)
      return { name, location: metadata.location }
    },
    async register(table, opts = {}) {
      const topic = opts.topic ?? 'events'
      const partition = opts.partition ?? 0
      const key = `${topic}-${partition}`
      const expected = await readCheckpoints(ctx, config.pipeline, [{ topic, partition }])
      const first = expected.get(key) ?? 0n
      const next = first + BigInt(opts.count ?? 10)
      const files = Array.from({ length: opts.files ?? 1 }, () => fakeDataFile(locations.get(table)!, 5, opts.specId ?? 0, opts.partitionTuple ?? []))
      const outcome = await registerBatches(ctx, {
        pipeline: config.pipeline,
        writerId: 'test-writer',
        expected,
        next: new Map([[key, next]]),
        batches: [batchInput(table, [range(topic, partition, first, next, opts.maxTimestamp)], files, 0, opts.specId ?? 0)],
      })
      if (outcome !== 'registered') throw new Error(`registration of ${key} [${first}, ${next}) was ${outcome}`)
      return files
    },
    async livePaths(table) {
      const { metadata } = await catalog.loadTable(parseTableId(table))
      return (await liveDataFiles(ctx.io, metadata)).map((e) => e.dataFile.filePath)
    },
  }
}

/** A promise and its resolver, to hold a committer at a hook until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
