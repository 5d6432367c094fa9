/**
 * DataFile ⇄ JSON-safe object (for the control table): bigint → decimal string, Uint8Array →
 * base64, metric Maps → objects keyed by field id. Partition values are tagged so bigint,
 * bytes and numbers come back as the same types.
 */
import { IcebergError } from '../errors.js'
import type { DataFile, PartitionValue } from './types.js'

type Json = Record<string, unknown>

const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64')
const unb64 = (s: unknown) => new Uint8Array(Buffer.from(String(s), 'base64'))

function encodeValue(v: PartitionValue): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v
  if (typeof v === 'bigint') return { long: v.toString() }
  if (v instanceof Uint8Array) return { bytes: b64(v) }
  if (Number.isNaN(v) || !Number.isFinite(v)) return { number: String(v) }
  return v
}

function decodeValue(j: unknown): PartitionValue {
  if (j === null || typeof j === 'boolean' || typeof j === 'string' || typeof j === 'number') return j
  const o = j as Json
  if (typeof o.long === 'string') return BigInt(o.long)
  if (typeof o.bytes === 'string') return unb64(o.bytes)
  if (typeof o.number === 'string') return Number(o.number)
  throw new IcebergError(`bad partition value in data file JSON: ${JSON.stringify(j)}`)
}

const mapOut = <V>(m: Map<number, V> | undefined, f: (v: V) => unknown) =>
  m === undefined ? undefined : Object.fromEntries([...m].map(([k, v]) => [String(k), f(v)]))
const mapIn = <V>(o: unknown, f: (v: unknown) => V) =>
  o === undefined || o === null ? undefined : new Map(Object.entries(o as Json).map(([k, v]) => [Number(k), f(v)]))

export function dataFileToJSON(f: DataFile): unknown {
  const out: Json = {
    content: f.content,
    filePath: f.filePath,
    fileFormat: f.fileFormat,
    specId: f.specId,
    partition: f.partition.map(encodeValue),
    recordCount: f.recordCount,
    fileSizeInBytes: f.fileSizeInBytes,
    columnSizes: mapOut(f.columnSizes, (v) => v),
    valueCounts: mapOut(f.valueCounts, (v) => v),
    nullValueCounts: mapOut(f.nullValueCounts, (v) => v),
    nanValueCounts: mapOut(f.nanValueCounts, (v) => v),
    lowerBounds: mapOut(f.lowerBounds, b64),
    upperBounds: mapOut(f.upperBounds, b64),
    splitOffsets: f.splitOffsets,
    sortOrderId: f.sortOrderId,
    equalityIds: f.equalityIds,
    firstRowId: f.firstRowId?.toString(),
    referencedDataFile: f.referencedDataFile,
    contentOffset: f.contentOffset,
    contentSizeInBytes: f.contentSizeInBytes,
    keyMetadata: f.keyMetadata === undefined ? undefined : b64(f.keyMetadata),
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k]
  return out
}

export function dataFileFromJSON(j: unknown): DataFile {
  const o = j as Json
  if (typeof o !== 'object' || o === null || typeof o.filePath !== 'string' || !Array.isArray(o.partition))
    throw new IcebergError(`not a data file JSON object: ${JSON.stringify(j)?.slice(0, 200)}`)
  const f: DataFile = {
    content: Number(o.content ?? 0) as DataFile['content'],
    filePath: o.filePath,
    fileFormat: o.fileFormat as DataFile['fileFormat'],
    specId: Number(o.specId),
    partition: o.partition.map(decodeValue),
    recordCount: Number(o.recordCount),
    fileSizeInBytes: Number(o.fileSizeInBytes),
  }
  const set = <K extends keyof DataFile>(k: K, v: DataFile[K] | undefined) => {
    if (v !== undefined) f[k] = v
  }
  set('columnSizes', mapIn(o.columnSizes, Number))
  set('valueCounts', mapIn(o.valueCounts, Number))
  set('nullValueCounts', mapIn(o.nullValueCounts, Number))
  set('nanValueCounts', mapIn(o.nanValueCounts, Number))
  set('lowerBounds', mapIn(o.lowerBounds, unb64))
  set('upperBounds', mapIn(o.upperBounds, unb64))
  set('splitOffsets', (o.splitOffsets as unknown[] | undefined)?.map(Number))
  set('sortOrderId', o.sortOrderId === undefined ? undefined : Number(o.sortOrderId))
  set('equalityIds', (o.equalityIds as unknown[] | undefined)?.map(Number))
  set('firstRowId', o.firstRowId === undefined ? undefined : BigInt(o.firstRowId as string))
  set('referencedDataFile', o.referencedDataFile as string | undefined)
  set('contentOffset', o.contentOffset === undefined ? undefined : Number(o.contentOffset))
  set('contentSizeInBytes', o.contentSizeInBytes === undefined ? undefined : Number(o.contentSizeInBytes))
  set('keyMetadata', o.keyMetadata === undefined ? undefined : unb64(o.keyMetadata))
  return f
}

/**
 * A data file in lib/control's registration form (its EncodedFile): the JSON text of
 * `dataFileToJSON(f)`, serialised once when the file is written, and the counts the registration needs.
 */
export const encodeDataFile = (f: DataFile): { json: string; filePath: string; recordCount: number; fileSizeInBytes: number } => ({
  json: JSON.stringify(dataFileToJSON(f)),
  filePath: f.filePath,
  recordCount: f.recordCount,
  fileSizeInBytes: f.fileSizeInBytes,
})
