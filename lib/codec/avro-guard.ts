/**
 * Bounds avsc's array and map decoding by the bytes actually present.
 *
 * avsc trusts an array or map block's item count: a corrupt 6-byte payload claiming 2^30 items
 * makes it allocate and loop a billion times — an out-of-memory crash, retried forever, that
 * stalls the partition (a poison pill). Every item takes at least `minBytes(itemType)` bytes, so a
 * block of n items that cannot fit in what is left of the buffer is refused before any work.
 * Items that encode to zero bytes (null, an empty record) are capped at MAX_EMPTY_ITEMS.
 */
/* oxlint-disable no-underscore-dangle -- avsc's reader protocol (_read) is what this module extends */
import avro from 'avsc'

/** Most zero-byte items one array or map may hold: far above any real use, far below an allocation that hurts. */
export const MAX_EMPTY_ITEMS = 1_000_000

interface Tap {
  buf: Buffer
  pos: number
  readLong(): number
  skipLong(): void
  readString(): string
}

type AnyType = avro.Type & {
  typeName: string
  itemsType?: AnyType
  valuesType?: AnyType
  types?: AnyType[]
  fields?: { type: AnyType }[]
  size?: number
  _read(tap: Tap): unknown
}

/** Least number of bytes a value of this type encodes to. */
function minBytes(type: AnyType, seen: Set<AnyType>): number {
  switch (type.typeName) {
    case 'null':
      return 0
    case 'float':
      return 4
    case 'double':
      return 8
    case 'fixed':
      return type.size ?? 0
    case 'record':
    case 'error': {
      if (seen.has(type)) return 0
      seen.add(type)
      const n = (type.fields ?? []).reduce((sum, f) => sum + minBytes(f.type, seen), 0)
      seen.delete(type)
      return n
    }
    default:
      return 1 // boolean, int, long, bytes, string, enum, array/map terminator, union index
  }
}

function blockSize(tap: Tap): number {
  let n = tap.readLong()
  if (n < 0) {
    n = -n
    tap.skipLong() // block size in bytes
  }
  return n
}

function check(n: number, perItem: number, tap: Tap, what: string): void {
  const left = tap.buf.length - tap.pos
  if (perItem > 0 ? n * perItem > left : n > MAX_EMPTY_ITEMS)
    throw new Error(`${what} block claims ${n} items but only ${Math.max(left, 0)} bytes are left`)
}

const perItemCache = new WeakMap<object, number>()
const perItem = (type: object, items: AnyType, extra: number) => {
  let n = perItemCache.get(type)
  if (n === undefined) perItemCache.set(type, (n = extra + minBytes(items, new Set())))
  return n
}

/** avsc's array type with a bounded reader (avsc freezes type instances, so this is a subclass). */
class BoundedArrayType extends (avro.types.ArrayType as unknown as new (schema: unknown, opts: unknown) => AnyType) {
  override _read(tap: Tap): unknown[] {
    const items = this.itemsType!
    const per = perItem(this, items, 0)
    const out: unknown[] = []
    let n: number
    while ((n = blockSize(tap))) {
      check(n, per, tap, 'array')
      while (n--) out.push(items._read(tap))
    }
    return out
  }
}

class BoundedMapType extends (avro.types.MapType as unknown as new (schema: unknown, opts: unknown) => AnyType) {
  override _read(tap: Tap): Record<string, unknown> {
    const values = this.valuesType!
    const per = perItem(this, values, 1) // + the key's length byte
    const out: Record<string, unknown> = {}
    let n: number
    while ((n = blockSize(tap))) {
      check(n, per, tap, 'map')
      while (n--) {
        const key = tap.readString()
        out[key] = values._read(tap)
      }
    }
    return out
  }
}

/** avsc `typeHook`: arrays and maps get the bounded readers. */
export function boundedCollections(schema: unknown, opts: unknown): avro.Type | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  const type = (schema as { type?: unknown }).type
  if (type === 'array') return new BoundedArrayType(schema, opts)
  if (type === 'map') return new BoundedMapType(schema, opts)
  return undefined
}
