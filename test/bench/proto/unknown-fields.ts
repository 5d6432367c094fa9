/**
 * Prototype for a proposal to lib/writer/tables.ts (not used by Floe): the writer's #evolve
 * coerces every record of the batch only to learn whether it has fields the table lacks, then
 * buildRow coerces it again. This walker answers "any informative key the schema does not
 * have?" without converting or allocating. `npx tsx test/bench/proto/unknown-fields.ts`
 * prints the cost of both on the bench's narrow and wide records.
 */
import { inferSchema } from '../../../lib/schema/infer.js'
import type { IcebergType, StructType } from '../../../lib/schema/types.js'
import { compileCoercer, isInformative } from '../../../lib/writer/columnar/index.js'
import { median, round } from '../common.js'
import { narrowRecord, wideRecord } from '../data.js'

type Walk = (v: unknown) => boolean

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date) && !(v instanceof Map)

function compile(type: IcebergType): Walk | undefined {
  if (typeof type !== 'object') return undefined
  if (type.type === 'struct') {
    const st = type as StructType
    const known = new Set(st.fields.map((f) => f.name))
    const children = st.fields.map((f) => [f.name, compile(f.type)] as const).filter(([, w]) => w !== undefined) as [string, Walk][]
    return (v) => {
      if (!isObj(v)) return false // a type mismatch is coerce's business, not an unknown field
      for (const key in v) if (!known.has(key) && isInformative(v[key])) return true
      for (const [name, w] of children) if (v[name] != null && w(v[name])) return true
      return false
    }
  }
  if (type.type === 'list') {
    const el = compile(type.element)
    return el ? (v) => Array.isArray(v) && v.some((e) => e != null && el(e)) : undefined
  }
  if (type.type === 'map') {
    const val = compile(type.value)
    return val ? (v) => isObj(v) && Object.values(v).some((e) => e != null && val(e)) : undefined
  }
  return undefined
}

export function compileUnknownFieldCheck(schema: StructType): Walk {
  return compile(schema)!
}

if (process.argv[1]?.endsWith('unknown-fields.ts')) {
  for (const [name, n, make] of [
    ['narrow', 100_000, narrowRecord],
    ['wide', 10_000, (i: number) => wideRecord(i)],
  ] as const) {
    const records = Array.from({ length: n }, (_, i) => JSON.parse(JSON.stringify(make(i))) as Record<string, unknown>)
    const schema = inferSchema(records.slice(0, 1000))
    const coerce = compileCoercer(schema, { table: 'proto' })
    const walk = compileUnknownFieldCheck(schema)
    const time = (f: () => void) => {
      f()
      const xs: number[] = []
      for (let k = 0; k < 5; k++) {
        const t0 = performance.now()
        f()
        xs.push(performance.now() - t0)
      }
      return round(median(xs), 1)
    }
    let a = 0
    let b = 0
    const coerceMs = time(() => {
      for (const r of records) if (coerce(r).unknown.length > 0) a++
    })
    const walkMs = time(() => {
      for (const r of records) if (walk(r)) b++
    })
    console.log(JSON.stringify({ dataset: name, records: n, evolveCheckByCoerceMs: coerceMs, evolveCheckByWalkMs: walkMs, speedup: round(coerceMs / walkMs, 1), agree: a === b }))
  }
}
