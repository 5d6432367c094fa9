/**
 * The scanner's structs compiled to code (scan.ts): one generated function per schema reads a
 * record's object — and every nested struct, inline — with each field's key compared byte by
 * byte as constants and each column's `value` called at a site of its own. A generic walker
 * (what StructColumn.value was) calls every child through one call site, which V8 sees as
 * megamorphic (a call it cannot inline): it was the largest self time of the narrow writer's profile.
 *
 * What it reads: keys in schema order, each at most once, a field it passes absent, absent or
 * null only where the field is optional, a comma always followed by a key, nothing after the last
 * field but `}`; a value holding the `_kafka` key is never read. A struct's rows, validity, nulls
 * and rollback stay StructColumn's (scan-nested.ts).
 */
import { generated } from './codegen.js'
import { skip } from './scan-bytes.js'
import type { ScanColumn } from './scan-leaves.js'
import { KafkaColumn, StructColumn } from './scan-nested.js'

/** Reads a record's object at `i` into the columns: the index after it, or -1 (the caller rolls back). */
export type StructScan = (b: Uint8Array, i: number) => number

interface Emit {
  /** Leaf and list columns, by the `c<n>` constant the code calls them through. */
  columns: ScanColumn[]
  /** Struct columns, by their `s<n>` constant. */
  structs: StructColumn[]
  /** Generated functions of field runs (`f<n>`), each a string of source. */
  functions: string[]
}

/**
 * Leaf columns read by one generated function at most. V8 does not optimise a function past a
 * bytecode size (60 KB): a 200-column struct as one function ran interpreted, 2× slower than the
 * generic walker. A struct wider than this is read by a function per run of its fields.
 */
export const LEAVES_PER_FUNCTION = 24

/** Leaf columns under a column (a list counts as one: its element is read by ListColumn). */
const leaves = (col: ScanColumn): number => (col instanceof StructColumn ? col.children.reduce((n, c) => n + leaves(c), 0) : 1)

/** The struct's field indexes in runs of at most LEAVES_PER_FUNCTION leaves (a wider field alone). */
function runsOf(col: StructColumn): number[][] {
  const runs: number[][] = [[]]
  let weight = 0
  col.children.forEach((child, k) => {
    const w = leaves(child)
    if (weight > 0 && weight + w > LEAVES_PER_FUNCTION) {
      runs.push([])
      weight = 0
    }
    runs.at(-1)!.push(k)
    weight += w
  })
  return runs
}

/** The bytes of `key` compared at `i` as one condition. */
const keyTest = (key: Uint8Array): string => Array.from(key, (c, k) => `b[i${k ? ` + ${k}` : ''}] === ${c}`).join(' && ')

/**
 * `i = at`, past any whitespace there. JSON's whitespace is all at or below 0x20 and every token
 * starts above it, so the call is made only where there is some: a generated function this size
 * spends V8's inlining budget on the columns' readers, and `skip` called at every key and value
 * was measured 3 % of the scanner.
 */
const skipTo = (at: string): string => `i = ${at}; if (b[i] <= 32) i = skip(b, i)`

/** `const` name of a column, registered in `e`. */
function constant(e: Emit, col: ScanColumn): string {
  if (col instanceof StructColumn) return `s${e.structs.push(col) - 1}`
  return `c${e.columns.push(col) - 1}`
}

/**
 * A struct's value at `i` (its `{`) into `L`, leaving `i` after its `}`; `return -1` on anything
 * it does not read. Between fields `i` is at a key's quote or at the struct's `}` (a comma must
 * be followed by a key), so a run of fields read by a function of its own starts from `i` alone.
 */
function emitStruct(e: Emit, col: StructColumn, L: string[]): void {
  const s = constant(e, col)
  L.push(`if (b[i] !== 123) return -1`, skipTo('i + 1'))
  const runs = runsOf(col)
  if (runs.length === 1) emitFields(e, col, s, runs[0]!, L)
  else
    for (const run of runs) {
      // Its slot is taken first: the run's nested structs may add functions of their own.
      const index = e.functions.push('') - 1
      const F: string[] = []
      emitFields(e, col, s, run, F)
      e.functions[index] = [`function f${index}(b, i) {`, ...F, `return i`, `}`].join('\n')
      L.push(`if ((i = f${index}(b, i)) < 0) return -1`)
    }
  // A key none of the fields took is still waiting: not this struct's.
  L.push(`if (b[i] !== 125) return -1`, `${s}.valid.set(${s}.length++, true)`, `i++`)
}

/** The fields `run` of struct `s`: each key in turn, or the field is absent. */
function emitFields(e: Emit, col: StructColumn, s: string, run: number[], L: string[]): void {
  const closed = `z${s}`
  L.push(`let ${closed} = b[i] === 125`)
  for (const k of run) {
    const child = col.children[k]!
    const key = col.keys[k]!
    // The metadata column is filled from the record's Kafka metadata: a value that has its key,
    // whatever it holds (null too), is the present path's to judge (a dead letter).
    if (child instanceof KafkaColumn) {
      L.push(`if (!${closed} && ${keyTest(key)}) return -1`)
      continue
    }
    const required = col.required[k]!
    const nested = child instanceof StructColumn
    const name = nested ? '' : constant(e, child)
    // A nested struct's null is StructColumn.null: every child null, the struct's row invalid.
    const nullOf = nested ? `${s}.children[${k}].null()` : `${name}.null()`
    L.push(`if (!${closed} && ${keyTest(key)}) {`, skipTo(`i + ${key.length}`), `if (b[i] !== 58) return -1`, skipTo('i + 1'))
    if (col.firstKey) L.push(`if (${s}.firstKey[${k}] < 0) ${s}.firstKey[${k}] = ${s}.length`)
    L.push(`if (b[i] === 110) {`, required ? 'return -1' : `if (b[i + 1] !== 117 || b[i + 2] !== 108 || b[i + 3] !== 108) return -1; ${nullOf}; i += 4`, `} else {`)
    if (nested) emitStruct(e, child, L)
    else L.push(`if ((i = ${name}.value(b, i)) < 0) return -1`)
    L.push(`}`, `if (b[i] <= 32) i = skip(b, i)`, `if (b[i] === 125) ${closed} = true`, `else if (b[i] === 44) { ${skipTo('i + 1')}; if (b[i] !== 34) return -1 }`, `else return -1`)
    L.push(`} else {`, required ? 'return -1' : nullOf, `}`)
  }
}

/** The generated reader of `root`'s records (the top-level struct; a `_kafka` key in a value refuses it). */
export function compileStructScan(root: StructColumn): StructScan {
  const e: Emit = { columns: [], structs: [], functions: [] }
  const L: string[] = []
  emitStruct(e, root, L)
  const body = [
    ...e.columns.map((_, k) => `const c${k} = columns[${k}]`),
    ...e.structs.map((_, k) => `const s${k} = structs[${k}]`),
    ...e.functions,
    `return function scanStruct(b, i) {`,
    ...L,
    `return i`,
    `}`,
  ].join('\n')
  return generated<(columns: ScanColumn[], structs: StructColumn[], skip: (b: Uint8Array, i: number) => number) => StructScan>(['columns', 'structs', 'skip'], body)(e.columns, e.structs, skip)
}
