/**
 * Resolve record fields by Iceberg field id (falling back to known names) in a writer's Avro
 * schema, so manifests from any writer read alike: Java (ids in the schema), PyIceberg, BigQuery
 * (alphabetical field order), DuckDB, iceberg-cxx, and the renamed count columns.
 */
type Raw = Record<string, unknown>

export interface RecordShape {
  /** Writer field name for an Iceberg field id (or one of its known names), if present. */
  name(id: number, ...names: string[]): string | undefined
  /** The (union-unwrapped) writer schema of that field. */
  schema(id: number, ...names: string[]): unknown
  fields: Raw[]
}

/** The non-null branch of an optional union (or the schema itself). */
export function unwrapUnion(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    const branches = schema.filter((s) => s !== 'null')
    return branches.length === 1 ? branches[0] : schema
  }
  return schema
}

export function recordShape(schema: unknown): RecordShape {
  const rec = unwrapUnion(schema) as Raw
  const fields = (Array.isArray(rec?.fields) ? rec.fields : []) as Raw[]
  const find = (id: number, names: string[]) =>
    fields.find((f) => f['field-id'] === id || f['field-id'] === String(id)) ??
    fields.find((f) => f['field-id'] === undefined && names.includes(f.name as string)) ??
    fields.find((f) => names.includes(f.name as string))
  return {
    fields,
    name: (id, ...names) => find(id, names)?.name as string | undefined,
    schema: (id, ...names) => unwrapUnion(find(id, names)?.type),
  }
}

/** Reads one field of a decoded record by id/names; undefined when the writer has no such field. */
export function get(rec: Raw, shape: RecordShape, id: number, ...names: string[]): unknown {
  const n = shape.name(id, ...names)
  return n === undefined ? undefined : rec[n]
}

export const asNumber = (v: unknown): number | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'bigint' ? Number(v) : (v as number)

export const asBigInt = (v: unknown): bigint | undefined =>
  v === undefined || v === null ? undefined : typeof v === 'bigint' ? v : BigInt(v as number)

export const asBytes = (v: unknown): Uint8Array | undefined =>
  v === undefined || v === null ? undefined : new Uint8Array(v as Uint8Array)
