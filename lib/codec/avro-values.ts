/**
 * avsc's decoded values (unions wrapped, longs as bigint) → the value shape of ./index.ts, walking
 * the same AvroNode tree the Iceberg type came from (./avro-schema.ts).
 */
import { RecordError } from '../errors.js'
import { nonNullBranches, type AvroLogical, type AvroNode } from './avro-schema.js'
import { decimalFromBytes, isoDate, isoMicros, isoNanos, isoTime, ownBytes, uuidText } from './shape.js'

/** Convert one decoded value; throws RecordError for a value the schema does not allow (avsc bug or schema mismatch). */
export function convertAvroValue(node: AvroNode, value: unknown, path = '$'): unknown {
  switch (node.kind) {
    case 'primitive':
      return primitive(node.type, node.logical, value, path)
    case 'fixed':
      return bytesValue(node.logical, value, path)
    case 'enum':
      return value
    case 'record': {
      const obj = value as Record<string, unknown>
      const out: Record<string, unknown> = {}
      for (const f of node.fields) out[f.name] = convertAvroValue(f.node, obj[f.name], `${path}.${f.name}`)
      return out
    }
    case 'array':
      return (value as unknown[]).map((v, i) => convertAvroValue(node.items, v, `${path}[${i}]`))
    case 'map': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = convertAvroValue(node.values, v, `${path}.${k}`)
      return out
    }
    case 'union': {
      if (value === null || value === undefined) return null
      const [branch, inner] = Object.entries(value as Record<string, unknown>)[0] ?? []
      const index = branch === undefined ? -1 : node.branchNames.indexOf(branch)
      if (index < 0) throw new RecordError(`${path}: union value has unknown branch ${JSON.stringify(branch)}`)
      const chosen = node.branches[index]!
      const options = nonNullBranches(node)
      if (options.length <= 1) return convertAvroValue(chosen, inner, path)
      // Complex union → { tag, field0, field1, … } (see ./avro-schema.ts).
      const tag = options.indexOf(chosen)
      const out: Record<string, unknown> = { tag }
      options.forEach((b, i) => {
        out[`field${i}`] = i === tag ? convertAvroValue(b, inner, `${path}.field${i}`) : null
      })
      return out
    }
  }
}

function primitive(type: string, logical: AvroLogical | undefined, value: unknown, path: string): unknown {
  switch (type) {
    case 'null':
      return null
    case 'bytes':
      return bytesValue(logical, value, path)
    case 'int':
      if (logical?.kind === 'date') return isoDate(value as number)
      if (logical?.kind === 'time-millis') return isoTime(BigInt(value as number) * 1000n)
      return value
    case 'long': {
      const n = value as bigint
      if (logical?.kind === 'time-micros') return isoTime(n)
      if (logical?.kind === 'timestamp') {
        if (logical.unit === 'millis') return isoMicros(n * 1000n, logical.zoned)
        if (logical.unit === 'micros') return isoMicros(n, logical.zoned)
        return isoNanos(n, logical.zoned)
      }
      return n
    }
    default:
      return value
  }
}

function bytesValue(logical: AvroLogical | undefined, value: unknown, path: string): unknown {
  if (!(value instanceof Uint8Array)) throw new RecordError(`${path}: expected bytes, got ${typeof value}`)
  if (logical?.kind === 'decimal') return decimalFromBytes(value, logical.scale)
  if (logical?.kind === 'uuid') return uuidText(value)
  return ownBytes(value)
}
