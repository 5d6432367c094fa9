/**
 * Conservative in-memory size of a coerced row, what the writer's buffers charge for it
 * (buffers.ts): strings at 2 bytes per character plus a header, 16 bytes per number, 32 per
 * bigint, and a per-key and per-object overhead (measured V8 objects run ~1.5-3× their JSON
 * size; this charges more). coerce.ts computes the same figure while it builds a row, so a row
 * is not walked a second time.
 */
export const OBJECT_OVERHEAD = 64
export const KEY_OVERHEAD = 16
const STRING_HEADER = 24

/** The size of any value (see the module comment). */
export function estimateRowBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return STRING_HEADER + 2 * value.length
    case 'number':
    case 'boolean':
      return 16
    case 'bigint':
      return 32
    case 'undefined':
      return 8
    case 'object': {
      if (value === null) return 8
      if (value instanceof Uint8Array) return OBJECT_OVERHEAD + value.byteLength
      if (value instanceof Date) return OBJECT_OVERHEAD
      if (Array.isArray(value)) {
        let n = OBJECT_OVERHEAD + 8 * value.length
        for (const v of value) n += estimateRowBytes(v)
        return n
      }
      if (value instanceof Map) {
        let n = OBJECT_OVERHEAD
        for (const [k, v] of value) n += KEY_OVERHEAD + estimateRowBytes(k) + estimateRowBytes(v)
        return n
      }
      let n = OBJECT_OVERHEAD
      for (const k in value as Record<string, unknown>) {
        n += KEY_OVERHEAD + 2 * k.length + estimateRowBytes((value as Record<string, unknown>)[k])
      }
      return n
    }
    default:
      return 16
  }
}
