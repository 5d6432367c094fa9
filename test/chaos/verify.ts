/**
 * The chaos harness's judge. It reads the table WITHOUT Floe's code: the catalog item with a raw
 * GetItem, metadata JSON with lossless-json, manifest lists and manifests with plain avsc (a
 * BigInt long type, nothing Iceberg-specific), data files with hyparquet, and dead letters as
 * NDJSON. Then it checks every produced record is in the table exactly once or in the dead-letter
 * store exactly once, never both, never neither.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'
import avro from 'avsc'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { isInteger, parse as parseLossless } from 'lossless-json'
import { Readable } from 'node:stream'

// oxlint-disable-next-line no-underscore-dangle -- avsc's documented hook for custom long types
const BigLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8)
    buf.writeBigInt64LE(BigInt(n))
    return buf
  },
  fromJSON: (v: unknown) => BigInt(v as string),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
})

const codecs = {
  null: (buf: Buffer, cb: (err: Error | null, out?: Buffer) => void) => cb(null, buf),
  deflate: async (buf: Buffer, cb: (err: Error | null, out?: Buffer) => void) => {
    const zlib = await import('node:zlib')
    zlib.inflateRaw(buf, cb)
  },
}

function splitS3(path: string): { Bucket: string; Key: string } {
  const m = /^s3a?:\/\/([^/]+)\/(.*)$/.exec(path)
  if (!m) throw new Error(`not an s3 path: ${path}`)
  return { Bucket: m[1]!, Key: m[2]! }
}

async function getBytes(s3: S3Client, path: string): Promise<Buffer> {
  const out = await s3.send(new GetObjectCommand(splitS3(path)))
  return Buffer.from(await out.Body!.transformToByteArray())
}

async function* listKeys(s3: S3Client, prefix: string): AsyncGenerator<{ key: string; path: string }> {
  const { Bucket, Key } = splitS3(prefix.endsWith('/') ? prefix : `${prefix}/`)
  let token: string | undefined
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: Key, ContinuationToken: token }))
    for (const o of page.Contents ?? []) yield { key: o.Key!, path: `s3://${Bucket}/${o.Key}` }
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
}

async function readAvro(s3: S3Client, path: string): Promise<Record<string, unknown>[]> {
  const bytes = await getBytes(s3, path)
  const records: Record<string, unknown>[] = []
  await new Promise<void>((resolve, reject) => {
    Readable.from([bytes])
      .pipe(new avro.streams.BlockDecoder({ codecs, parseHook: (schema: unknown) => avro.Type.forSchema(schema as never, { registry: { long: BigLong } as never, wrapUnions: false }) }))
      .on('data', (r: Record<string, unknown>) => records.push(r))
      .on('end', resolve)
      .on('error', reject)
  })
  return records
}

export interface TableContents {
  metadataLocation: string
  /** "topic-partition@offset" → number of rows carrying it. */
  rows: Map<string, number>
  foreignRows: number
  dataFiles: string[]
  summary: Record<string, string>
  snapshots: number
}

/** Everything the table's current snapshot holds, read independently of Floe. */
export async function readTable(ddb: DynamoDBClient, s3: S3Client, catalogTable: string, namespace: string, name: string): Promise<TableContents | undefined> {
  const item = await ddb.send(
    new GetItemCommand({ TableName: catalogTable, Key: { identifier: { S: `${namespace}.${name}` }, namespace: { S: namespace } }, ConsistentRead: true }),
  )
  const metadataLocation = item.Item?.['p.metadata_location']?.S
  if (!metadataLocation) return undefined
  const metadata = parseLossless((await getBytes(s3, metadataLocation)).toString('utf8'), undefined, (v) =>
    isInteger(v) ? BigInt(v) : Number(v),
  ) as Record<string, unknown>
  const current = metadata['current-snapshot-id'] as bigint | null | undefined
  const snapshots = (metadata.snapshots ?? []) as Record<string, unknown>[]
  const snapshot = snapshots.find((s) => s['snapshot-id'] === current)
  const contents: TableContents = { metadataLocation, rows: new Map(), foreignRows: 0, dataFiles: [], summary: {}, snapshots: snapshots.length }
  if (!snapshot) return contents
  contents.summary = snapshot.summary as Record<string, string>
  for (const manifest of await readAvro(s3, snapshot['manifest-list'] as string)) {
    if (Number(manifest.content ?? 0) !== 0) continue
    for (const entry of await readAvro(s3, manifest.manifest_path as string)) {
      if (Number(entry.status) === 2) continue
      contents.dataFiles.push((entry.data_file as Record<string, unknown>).file_path as string)
    }
  }
  for (const path of contents.dataFiles) {
    const bytes = await getBytes(s3, path)
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    const rows = (await parquetReadObjects({ file, compressors, columns: ['_kafka'] })) as { _kafka?: { topic?: string; partition?: number; offset?: bigint | number } | null }[]
    for (const row of rows) {
      // oxlint-disable-next-line no-underscore-dangle -- the _kafka column's name
      const k = row._kafka
      if (!k || k.topic == null) {
        contents.foreignRows++
        continue
      }
      const id = `${k.topic}-${k.partition}@${k.offset}`
      contents.rows.set(id, (contents.rows.get(id) ?? 0) + 1)
    }
  }
  return contents
}

/** Dead letters under a prefix: "topic-partition@offset" → count, and their reasons. */
export async function readDeadLetters(s3: S3Client, prefix: string): Promise<Map<string, { count: number; reason: string }>> {
  const out = new Map<string, { count: number; reason: string }>()
  for await (const { path } of listKeys(s3, prefix)) {
    const text = (await getBytes(s3, path)).toString('utf8')
    for (const line of text.split('\n')) {
      if (!line.trim()) continue
      const dl = JSON.parse(line) as { topic: string; partition: number; offset: string | number; reason: string }
      const id = `${dl.topic}-${dl.partition}@${dl.offset}`
      const prev = out.get(id)
      out.set(id, { count: (prev?.count ?? 0) + 1, reason: dl.reason })
    }
  }
  return out
}

/** Data files under a table's data/ folder that the current snapshot does not reference. */
export async function findOrphans(s3: S3Client, tableLocation: string, referenced: string[]): Promise<string[]> {
  const live = new Set(referenced.map((p) => p.replace(/^s3a:/, 's3:')))
  const orphans: string[] = []
  for await (const { path } of listKeys(s3, `${tableLocation.replace(/\/+$/, '')}/data`)) if (!live.has(path)) orphans.push(path)
  return orphans
}

export interface Verdict {
  produced: number
  inTable: number
  inDeadLetters: number
  lost: string[]
  duplicated: string[]
  both: string[]
  offsetMismatches: string[]
}

/**
 * Each partition's offset checkpoint, read with a raw GetItem in the layout
 * docs/commit-protocol.md documents (`ckpt#<pipeline>#<topic>#<partition>`, `next` as a decimal
 * string); `undefined` where there is none.
 */
export async function readCheckpoints(ddb: DynamoDBClient, controlTable: string, pipeline: string, partitions: string[]): Promise<Map<string, bigint | undefined>> {
  const out = new Map<string, bigint | undefined>()
  for (const tp of partitions) {
    const at = tp.lastIndexOf('-')
    const item = await ddb.send(
      new GetItemCommand({ TableName: controlTable, Key: { pk: { S: `ckpt#${pipeline}#${tp.slice(0, at)}#${tp.slice(at + 1)}` }, sk: { S: 'ckpt' } }, ConsistentRead: true }),
    )
    const next = item.Item?.next?.S
    out.set(tp, next === undefined ? undefined : BigInt(next))
  }
  return out
}

/**
 * Compare what was produced with what landed: every record in exactly one table row or exactly
 * one dead letter. Offsets, per partition: the checkpoint must equal the log-end offset (every
 * record consumed), and the tables' summary offset must equal it too — or, where the partition
 * ends in a run of dead letters, no table snapshot was needed for them: then every record at or
 * after the summary offset must be a dead letter.
 */
export function judge(
  produced: { id: string; poison: boolean }[],
  tables: TableContents[],
  dead: Map<string, { count: number }>,
  expectedOffsets: Map<string, bigint>,
  pipeline: string,
  checkpoints: Map<string, bigint | undefined>,
  /**
   * Records of batches the mapping gave up on and replay re-ingested. Replay moves neither
   * checkpoints nor summary offsets (its records are below them — or, for a partition's last
   * batch, the mapping moved on without a live writer after it): a partition may then end below
   * its log end, as long as everything after that point was replayed or dead-lettered.
   */
  replayed?: Set<string>,
): Verdict {
  const rows = new Map<string, number>()
  for (const t of tables) for (const [id, n] of t.rows) rows.set(id, (rows.get(id) ?? 0) + n)
  const v: Verdict = { produced: produced.length, inTable: 0, inDeadLetters: 0, lost: [], duplicated: [], both: [], offsetMismatches: [] }
  for (const { id } of produced) {
    const inTable = rows.get(id) ?? 0
    const inDead = dead.get(id)?.count ?? 0
    if (inTable > 0 && inDead > 0) v.both.push(id)
    else if (inTable + inDead === 0) v.lost.push(id)
    else if (inTable > 1 || inDead > 1) v.duplicated.push(id)
    if (inTable > 0) v.inTable++
    if (inDead > 0) v.inDeadLetters++
  }
  const committed = new Map<string, bigint>()
  for (const t of tables) {
    const raw = t.summary[`floe.offsets.${pipeline}`]
    if (!raw) continue
    for (const [tp, off] of Object.entries(JSON.parse(raw) as Record<string, string | number>)) {
      const n = BigInt(off)
      if ((committed.get(tp) ?? -1n) < n) committed.set(tp, n)
    }
  }
  const split = (id: string) => {
    const at = id.lastIndexOf('@')
    return { tp: id.slice(0, at), offset: BigInt(id.slice(at + 1)) }
  }
  for (const [tp, end] of expectedOffsets) {
    const got = committed.get(tp)
    const checkpoint = checkpoints.get(tp)
    const tail = (from: bigint | undefined) => produced.map((p) => ({ ...p, ...split(p.id) })).filter((p) => p.tp === tp && (from === undefined || p.offset >= from))
    const replayedTail = (from: bigint | undefined) => replayed !== undefined && tail(from).every((p) => replayed.has(p.id) || dead.has(p.id))
    if (checkpoint !== end && !(checkpoint !== undefined && checkpoint < end && replayedTail(checkpoint)) && !(checkpoint === undefined && replayedTail(undefined)))
      v.offsetMismatches.push(`${tp}: checkpoint ${checkpoint} != end ${end}`)
    if (got !== undefined && got > end) v.offsetMismatches.push(`${tp}: summary ${got} > end ${end}`)
    if (got === end) continue
    const uncovered = produced.map((p) => ({ ...p, ...split(p.id) })).filter((p) => p.tp === tp && (got === undefined || p.offset >= got))
    const notDead = uncovered.filter((p) => !dead.has(p.id) && !replayed?.has(p.id))
    if (notDead.length > 0) v.offsetMismatches.push(`${tp}: summary ${got} != end ${end}, and ${notDead[0]!.id} (of ${notDead.length}) after it is not a dead letter`)
  }
  return v
}

/**
 * Files some snapshot still in the table's metadata names that do not exist ("dangling"): manifest
 * lists, manifests and the live (not DELETED) data files of every kept snapshot. Must be empty
 * after compaction and snapshot expiry.
 */
export async function findDangling(s3: S3Client, metadataLocation: string): Promise<string[]> {
  const metadata = parseLossless((await getBytes(s3, metadataLocation)).toString('utf8'), undefined, (v) => (isInteger(v) ? BigInt(v) : Number(v))) as Record<string, unknown>
  const present = new Map<string, boolean>()
  const exists = async (path: string) => {
    if (!present.has(path)) {
      const { Bucket, Key } = splitS3(path)
      const page = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: Key, MaxKeys: 1 }))
      present.set(path, page.Contents?.[0]?.Key === Key)
    }
    return present.get(path)!
  }
  const dangling = new Set<string>()
  for (const snapshot of (metadata.snapshots ?? []) as Record<string, unknown>[]) {
    const list = snapshot['manifest-list'] as string
    if (!(await exists(list))) {
      dangling.add(list)
      continue
    }
    for (const manifest of await readAvro(s3, list)) {
      const path = manifest.manifest_path as string
      if (!(await exists(path))) {
        dangling.add(path)
        continue
      }
      for (const entry of await readAvro(s3, path)) {
        const file = (entry.data_file as Record<string, unknown>).file_path as string
        if (Number(entry.status) !== 2 && !(await exists(file))) dangling.add(file)
      }
    }
  }
  return [...dangling]
}
