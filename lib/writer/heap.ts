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
 */
import { getHeapStatistics } from 'node:v8'

type Gc = () => void

export class HeapGuard {
  readonly #headroom: number
  readonly #gc: Gc | undefined
  #base: number
  /** Full collections this guard ran (metrics, tests). */
  collections = 0

  /** `headroomBytes` 0: off. `gc`: the collector (default: the global one Node exposes, if any). */
  constructor(headroomBytes: number, gc: Gc | undefined = (globalThis as { gc?: Gc }).gc) {
    this.#headroom = headroomBytes
    this.#gc = headroomBytes > 0 ? gc : undefined
    this.#base = this.#gc ? footprint() : 0
  }

  /** Run a full GC if the heap has grown by more than the headroom since the last one. */
  collect(): void {
    if (!this.#gc || footprint() - this.#base <= this.#headroom) return
    this.#gc()
    this.collections++
    this.#base = footprint()
  }
}

/** V8's heap in use plus the external memory it tracks (ArrayBuffers, external strings). */
function footprint(): number {
  const h = getHeapStatistics()
  return h.used_heap_size + h.external_memory
}
