/**
 * Garbage bounded by the budget (FLOE_GC_HEADROOM_MB). The writer's buffers are bounded by
 * FLOE_MEMORY_BUDGET_MB, but what encoding and writing a file leaves behind (Arrow tables, IPC
 * streams, Parquet bytes, request bodies: tens of KB per file, ~1 MB per 200-column file of one
 * row) is garbage V8 promotes to its old generation and does not collect until that generation
 * reaches its allocation limit — which V8 starts at half the heap limit (hundreds of MB at
 * Lambda's sizes). A 1,200-file event piled up ~150 MB of it (docs/benchmarks.md, "Writer
 * memory bound").
 *
 * So after each written file the sink asks `collect()`: when the JS heap plus V8's external
 * memory (ArrayBuffers) has grown by more than the headroom since the last collection, it runs a
 * full GC. Only where Node exposes `gc` — Lambda's Node runtime starts node with --expose-gc
 * (docs/benchmarks.md cites its bootstrap) — else it does nothing. A full GC of the writer's
 * heap costs milliseconds; it runs once per headroom's worth of garbage, not per file.
 *
 * Growth that is live (rows the budget holds, up to FLOE_MEMORY_BUDGET_MB) is not garbage: a
 * collection that frees less than half the headroom doubles the headroom until one frees more,
 * so filling a large budget costs a few collections (logarithmic in the budget), not one per
 * headroom of live rows.
 */
import { getHeapStatistics } from 'node:v8'

type Gc = () => void

export class HeapGuard {
  readonly #headroom: number
  /** The headroom now: doubled after a collection that freed little (live growth), reset after one that freed much. */
  #current: number
  readonly #gc: Gc | undefined
  #base: number
  /** Full collections this guard ran (metrics, tests). */
  collections = 0

  /** `headroomBytes` 0: off. `gc`: the collector (default: the global one Node exposes, if any). */
  constructor(headroomBytes: number, gc: Gc | undefined = (globalThis as { gc?: Gc }).gc) {
    this.#headroom = headroomBytes
    this.#current = headroomBytes
    this.#gc = headroomBytes > 0 ? gc : undefined
    this.#base = this.#gc ? footprint() : 0
  }

  /** Run a full GC if the heap has grown by more than the headroom since the last one. */
  collect(): void {
    if (!this.#gc) return
    const before = footprint()
    if (before - this.#base <= this.#current) return
    this.#gc()
    this.collections++
    this.#base = footprint()
    this.#current = before - this.#base < this.#headroom / 2 ? this.#current * 2 : this.#headroom
  }
}

/** V8's heap in use plus the external memory it tracks (ArrayBuffers, external strings): what the guard measures. */
export function footprint(): number {
  const h = getHeapStatistics()
  return h.used_heap_size + h.external_memory
}
