/**
 * Avro schemas → Iceberg types (lib/schema's spec-JSON shape).
 *
 * The Avro schema is first resolved into a tree of `AvroNode`s (named types looked up with
 * Avro's namespace rules), which both the type mapping here and the value conversion in
 * ./avro-values.ts walk, so the two cannot disagree.
 *
 * Mapping (Iceberg's own AvroSchemaUtil where it has one):
 * - boolean int long float double string bytes → boolean int long float double string binary;
 *   enum → string; fixed(L) → fixed[L]; record → struct; array → list; map → map<string, V>.
 * - Logical types: decimal (on bytes or fixed) → decimal(P, S); date → date; time-millis and
 *   time-micros → time; timestamp-millis/micros → timestamptz (UTC-adjusted instants);
 *   local-timestamp-millis/micros → timestamp (no zone); timestamp-nanos / local-timestamp-nanos
 *   → timestamptz_ns / timestamp_ns (format v3); uuid (on string or fixed(16)) → uuid. A logical
 *   type on the wrong underlying type, or a decimal precision outside 1–38, is ignored as the
 *   Avro spec requires (the underlying type is used).
 * - A union with null is optional; `["null", X]` is an optional X. Any other union (two or more
 *   non-null branches) becomes, as in Iceberg's Avro reader and Trino/Hive, a struct
 *   `{ tag: int (required), field0: B0, field1: B1, … }` with one optional field per non-null
 *   branch in declaration order; `tag` is the index of the branch that holds the value.
 * - A bare `"null"` type (only null) maps to an optional string that is always null.
 * - Recursive records cannot be represented in Iceberg: SchemaError.
 * Field ids are assigned depth-first from 1; they are placeholders that the writer re-maps by
 * name onto the table's ids (lib/schema). Avro `doc` becomes the field's `doc`.
 */
import { SchemaError } from '../errors.js'
import type { IcebergType, NestedField, Schema, StructType } from '../schema/index.js'
import { IdAllocator } from './shape.js'

export type AvroPrimitive = 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'bytes' | 'string'

export type AvroLogical =
  | { kind: 'decimal'; precision: number; scale: number }
  | { kind: 'date' | 'time-millis' | 'time-micros' | 'uuid' }
  | { kind: 'timestamp'; unit: 'millis' | 'micros' | 'nanos'; zoned: boolean }

export type AvroNode =
  | { kind: 'primitive'; type: AvroPrimitive; logical?: AvroLogical }
  | { kind: 'record'; name: string; fields: { name: string; node: AvroNode; doc?: string }[] }
  | { kind: 'enum'; name: string; symbols: string[] }
  | { kind: 'fixed'; name: string; size: number; logical?: AvroLogical }
  | { kind: 'array'; items: AvroNode }
  | { kind: 'map'; values: AvroNode }
  /** `branchNames` are avsc's wrapped-union keys (full names for named types, else the type name). */
  | { kind: 'union'; branches: AvroNode[]; branchNames: string[] }

const PRIMITIVES = new Set<string>(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])

/**
 * Resolve an Avro schema (parsed JSON) into a node tree. `named` holds types defined elsewhere
 * (Confluent schema references), keyed by full name; it is extended with this schema's types.
 */
export function resolveAvroSchema(schema: unknown, named: Map<string, AvroNode> = new Map()): AvroNode {
  const building = new Set<string>()

  const fullName = (name: string, ns: string | undefined) => (name.includes('.') || !ns ? name : `${ns}.${name}`)

  const lookup = (ref: string, ns: string | undefined): AvroNode => {
    const candidates = ref.includes('.') ? [ref] : [fullName(ref, ns), ref]
    for (const c of candidates) {
      if (building.has(c)) throw new SchemaError(`Avro type ${c} is recursive; Iceberg cannot represent recursive types`)
      const node = named.get(c)
      if (node) return node
    }
    throw new SchemaError(`Avro schema refers to unknown type ${JSON.stringify(ref)}`)
  }

  const visit = (s: unknown, ns: string | undefined): AvroNode => {
    if (typeof s === 'string') return PRIMITIVES.has(s) ? { kind: 'primitive', type: s as AvroPrimitive } : lookup(s, ns)
    if (Array.isArray(s)) {
      const branches = s.map((b) => visit(b, ns))
      return { kind: 'union', branches, branchNames: branches.map(branchName) }
    }
    if (typeof s !== 'object' || s === null) throw new SchemaError(`invalid Avro schema ${JSON.stringify(s)}`)
    const o = s as Record<string, unknown>
    const type = o.type
    if (typeof type === 'object' && type !== null) return visit(type, ns)
    if (typeof type !== 'string') throw new SchemaError(`Avro schema without a type: ${JSON.stringify(s).slice(0, 200)}`)
    if (PRIMITIVES.has(type)) {
      const node: AvroNode = { kind: 'primitive', type: type as AvroPrimitive }
      const logical = logicalOf(o, type, undefined)
      if (logical) node.logical = logical
      return node
    }
    if (type === 'array') return { kind: 'array', items: visit(o.items, ns) }
    if (type === 'map') return { kind: 'map', values: visit(o.values, ns) }
    if (type === 'record' || type === 'error' || type === 'enum' || type === 'fixed') {
      if (typeof o.name !== 'string') throw new SchemaError(`Avro ${type} without a name`)
      const ownNs = o.name.includes('.') ? o.name.slice(0, o.name.lastIndexOf('.')) : typeof o.namespace === 'string' && o.namespace !== '' ? o.namespace : ns
      const name = fullName(o.name, ownNs)
      if (type === 'enum') return define(name, { kind: 'enum', name, symbols: Array.isArray(o.symbols) ? o.symbols.map(String) : [] })
      if (type === 'fixed') {
        const size = Number(o.size)
        const node: AvroNode = { kind: 'fixed', name, size }
        const logical = logicalOf(o, 'fixed', size)
        if (logical) node.logical = logical
        return define(name, node)
      }
      if (!Array.isArray(o.fields)) throw new SchemaError(`Avro record ${name} has no fields array`)
      building.add(name)
      const fields = o.fields.map((f: Record<string, unknown>) => {
        if (typeof f?.name !== 'string') throw new SchemaError(`Avro record ${name} has a field without a name`)
        const field: { name: string; node: AvroNode; doc?: string } = { name: f.name, node: visit(f.type, ownNs) }
        if (typeof f.doc === 'string') field.doc = f.doc
        return field
      })
      building.delete(name)
      return define(name, { kind: 'record', name, fields })
    }
    return lookup(type, ns)
  }

  const define = (name: string, node: AvroNode): AvroNode => {
    named.set(name, node)
    return node
  }

  return visit(schema, undefined)
}

function branchName(node: AvroNode): string {
  switch (node.kind) {
    case 'primitive':
      return node.type
    case 'array':
    case 'map':
      return node.kind
    case 'union':
      throw new SchemaError('Avro unions may not immediately contain other unions')
    default:
      return node.name
  }
}

const TIMESTAMPS: Record<string, { unit: 'millis' | 'micros' | 'nanos'; zoned: boolean }> = {
  'timestamp-millis': { unit: 'millis', zoned: true },
  'timestamp-micros': { unit: 'micros', zoned: true },
  'timestamp-nanos': { unit: 'nanos', zoned: true },
  'local-timestamp-millis': { unit: 'millis', zoned: false },
  'local-timestamp-micros': { unit: 'micros', zoned: false },
  'local-timestamp-nanos': { unit: 'nanos', zoned: false },
}

/** The logical type of a schema, or undefined when absent or invalid for its underlying type (Avro spec: ignore). */
function logicalOf(o: Record<string, unknown>, underlying: string, fixedSize: number | undefined): AvroLogical | undefined {
  const lt = o.logicalType
  if (typeof lt !== 'string') return undefined
  if (lt === 'decimal' && (underlying === 'bytes' || underlying === 'fixed')) {
    const precision = Number(o.precision)
    const scale = o.scale === undefined ? 0 : Number(o.scale)
    if (!Number.isInteger(precision) || precision < 1 || precision > 38) return undefined
    if (!Number.isInteger(scale) || scale < 0 || scale > precision) return undefined
    if (fixedSize !== undefined && precision > Math.floor(Math.log10(2) * (8 * fixedSize - 1))) return undefined
    return { kind: 'decimal', precision, scale }
  }
  if (lt === 'date' && underlying === 'int') return { kind: 'date' }
  if (lt === 'time-millis' && underlying === 'int') return { kind: 'time-millis' }
  if (lt === 'time-micros' && underlying === 'long') return { kind: 'time-micros' }
  if (lt in TIMESTAMPS && underlying === 'long') return { kind: 'timestamp', ...TIMESTAMPS[lt]! }
  if (lt === 'uuid' && (underlying === 'string' || (underlying === 'fixed' && fixedSize === 16))) return { kind: 'uuid' }
  return undefined
}

/** Whether a node accepts null (a union with a null branch, or null itself). */
export function isNullable(node: AvroNode): boolean {
  if (node.kind === 'primitive') return node.type === 'null'
  return node.kind === 'union' && node.branches.some((b) => b.kind === 'primitive' && b.type === 'null')
}

/** Non-null branches of a union, in order. */
export function nonNullBranches(node: AvroNode & { kind: 'union' }): AvroNode[] {
  return node.branches.filter((b) => !(b.kind === 'primitive' && b.type === 'null'))
}

/** The Iceberg type of an Avro node; ids from `ids`. */
export function avroToIcebergType(node: AvroNode, ids: IdAllocator = new IdAllocator()): IcebergType {
  switch (node.kind) {
    case 'primitive':
      return primitiveType(node.type, node.logical)
    case 'fixed':
      if (node.logical?.kind === 'decimal') return `decimal(${node.logical.precision}, ${node.logical.scale})`
      if (node.logical?.kind === 'uuid') return 'uuid'
      return `fixed[${node.size}]`
    case 'enum':
      return 'string'
    case 'record':
      return structOf(node.fields.map((f) => ({ name: f.name, node: f.node, doc: f.doc })), ids)
    case 'array': {
      const id = ids.take()
      return { type: 'list', 'element-id': id, element: avroToIcebergType(node.items, ids), 'element-required': !isNullable(node.items) }
    }
    case 'map': {
      const keyId = ids.take()
      const valueId = ids.take()
      return { type: 'map', 'key-id': keyId, key: 'string', 'value-id': valueId, value: avroToIcebergType(node.values, ids), 'value-required': !isNullable(node.values) }
    }
    case 'union': {
      const branches = nonNullBranches(node)
      if (branches.length === 0) return 'string'
      if (branches.length === 1) return avroToIcebergType(branches[0]!, ids)
      return structOf([{ name: 'tag', node: { kind: 'primitive', type: 'int' } }, ...branches.map((b, i) => ({ name: `field${i}`, node: b, optional: true }))], ids)
    }
  }
}

function structOf(fields: { name: string; node: AvroNode; doc?: string; optional?: boolean }[], ids: IdAllocator): StructType {
  // Iceberg assigns a struct's own field ids before descending into nested types.
  const own = fields.map(() => ids.take())
  const out: NestedField[] = fields.map((f, i) => {
    const field: NestedField = { id: own[i]!, name: f.name, required: !(f.optional || isNullable(f.node)), type: avroToIcebergType(f.node, ids) }
    if (f.doc !== undefined) field.doc = f.doc
    return field
  })
  return { type: 'struct', fields: out }
}

function primitiveType(type: AvroPrimitive, logical: AvroLogical | undefined): IcebergType {
  if (logical) {
    switch (logical.kind) {
      case 'decimal':
        return `decimal(${logical.precision}, ${logical.scale})`
      case 'date':
        return 'date'
      case 'time-millis':
      case 'time-micros':
        return 'time'
      case 'uuid':
        return 'uuid'
      case 'timestamp':
        return logical.unit === 'nanos' ? (logical.zoned ? 'timestamptz_ns' : 'timestamp_ns') : logical.zoned ? 'timestamptz' : 'timestamp'
    }
  }
  switch (type) {
    case 'null':
    case 'string':
      return 'string'
    case 'bytes':
      return 'binary'
    default:
      return type
  }
}

/**
 * The Iceberg schema of a record value. A non-record Avro schema (e.g. `"string"`) is wrapped in
 * a one-field struct `{ value }`, matching how its values are wrapped (see ./index.ts).
 */
export function avroToIcebergSchema(node: AvroNode): Schema {
  const ids = new IdAllocator()
  if (node.kind === 'record') return { 'schema-id': 0, ...(avroToIcebergType(node, ids) as StructType) }
  const struct = structOf([{ name: 'value', node }], ids)
  return { 'schema-id': 0, ...struct }
}
