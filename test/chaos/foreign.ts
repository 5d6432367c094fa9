/**
 * A foreign engine's append, as Spark or Trino would make one between a Floe committer's load and
 * its swap: a new Parquet file (rows without Kafka coordinates) appended through the same catalog
 * with Floe's Iceberg core used directly — not through the control table or the committer.
 */
import type { AwsClients } from '../../lib/clients.js'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { currentSchema, defaultSpec } from '../../lib/iceberg/metadata.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import { compileCoercer } from '../../lib/writer/columnar/coerce.js'
import { encodeParquet } from '../../lib/writer/columnar/parquet.js'
import { CommitConflictError } from '../../lib/errors.js'
import type { HarnessEnv } from './harness.js'

export function makeForeignAppender(env: HarnessEnv, clients: AwsClients): (namespace: string, table: string) => Promise<void> {
  const io = createFileIO(clients)
  const catalog = new DynamoDbCatalog({ ddb: clients.ddb, tableName: env.catalogTable, io, warehouse: `s3://${env.bucket}/warehouse` })
  return async (namespace, name) => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const { metadata, metadataLocation } = await catalog.loadTable({ namespace, name })
      const schema = currentSchema(metadata)
      const spec = defaultSpec(metadata)
      // One row with every optional column null except a numeric id if there is one; no _kafka.
      const row: Record<string, unknown> = {}
      for (const f of schema.fields) if (f.name === 'id' && typeof f.type === 'string') row.id = -1
      if (spec.fields.length > 0) return // a partitioned table would need a partition tuple: skip rather than fake one
      const { row: coerced } = compileCoercer(schema, { table: `${namespace}.${name}` })(row)
      const encoded = await encodeParquet(schema, [coerced], { compression: 'zstd', properties: metadata.properties })
      const path = `${metadata.location}/data/foreign-${Date.now()}-${attempt}.parquet`
      await io.write(path, encoded.bytes)
      const file: DataFile = {
        content: 0,
        filePath: path,
        fileFormat: 'PARQUET',
        specId: spec['spec-id'],
        partition: [],
        recordCount: encoded.recordCount,
        fileSizeInBytes: encoded.bytes.length,
        ...encoded.metrics,
      }
      const next = await appendFiles(io, metadata, [file], { summary: { 'engine-name': 'chaos-foreign-engine' } })
      try {
        await catalog.commit({ namespace, name }, { base: metadataLocation, metadata: next })
        return
      } catch (err) {
        if (!(err instanceof CommitConflictError)) throw err
      }
    }
  }
}
