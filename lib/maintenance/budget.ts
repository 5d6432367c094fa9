/**
 * Compaction's memory accounting (FLOE_COMPACT_MEMORY_MB). Each stage of a group's rewrite
 * declares what it holds under a kind — input byte ranges fetched, row groups decoded, rows as JS
 * values, the Arrow and IPC copies of a chunk, output bytes the sink has not uploaded — and the
 * growth of parquet-wasm's linear memory since the ledger was made is added (wasm memory never
 * shrinks, so its high-water mark counts for the rest of the run). A stage that would take the
 * total past the limit fails with CompactionMemoryError before allocating; `peak` is what the
 * tests and the benchmark compare with the limit and with the process's RSS.
 */
import { wasmMemory } from 'parquet-wasm/node'
import { IcebergError } from '../errors.js'

export type MemoryKind = 'fetched' | 'decoded' | 'rows' | 'arrow' | 'output' | 'footer'

/** A group needs more than the budget (one input row group alone, typically); the group is skipped. */
export class CompactionMemoryError extends IcebergError {}

/** JS values of decoded rows cost about this many times their uncompressed Parquet bytes (objects, strings, bigints). */
export const JS_ROW_FACTOR = 3

const wasmBytes = (): number => wasmMemory().buffer.byteLength

export class CompactionBudget {
  readonly #held = new Map<MemoryKind, number>()
  readonly #wasmBase: number
  #peak = 0
  #peakBy: Partial<Record<MemoryKind | 'wasm', number>> = {}

  constructor(
    readonly limit: number,
    private readonly wasm: () => number = wasmBytes,
  ) {
    this.#wasmBase = wasm()
  }

  /** parquet-wasm's growth since the ledger was made. */
  get wasmGrowth(): number {
    return Math.max(0, this.wasm() - this.#wasmBase)
  }

  get used(): number {
    let sum = this.wasmGrowth
    for (const v of this.#held.values()) sum += v
    return sum
  }

  get peak(): number {
    return this.#peak
  }

  /** The largest amount each kind held (for reports). */
  get peakByKind(): Partial<Record<MemoryKind | 'wasm', number>> {
    return { ...this.#peakBy }
  }

  /** What is left for a new allocation. */
  get free(): number {
    return this.limit - this.used
  }

  /** Declares that `kind` now holds `bytes`; fails if the total would pass the limit. */
  set(kind: MemoryKind, bytes: number, what: string = kind): void {
    const before = this.#held.get(kind) ?? 0
    const total = this.used - before + bytes
    if (bytes > before && total > this.limit) {
      throw new CompactionMemoryError(
        `compaction needs ${mb(total)} (${what}: ${mb(bytes)}) with FLOE_COMPACT_MEMORY_MB=${mb(this.limit)}; held: ${this.describe()}`,
      )
    }
    this.#held.set(kind, bytes)
    this.observe()
    this.#peakBy[kind] = Math.max(this.#peakBy[kind] ?? 0, bytes)
  }

  /** Re-reads wasm growth into the peak (after a call into parquet-wasm). */
  observe(): void {
    const used = this.used
    this.#peakBy.wasm = Math.max(this.#peakBy.wasm ?? 0, this.wasmGrowth)
    if (used > this.#peak) this.#peak = used
    if (used > this.limit) throw new CompactionMemoryError(`compaction holds ${mb(used)}, over FLOE_COMPACT_MEMORY_MB=${mb(this.limit)}; held: ${this.describe()}`)
  }

  describe(): string {
    return [...this.#held].filter(([, v]) => v > 0).map(([k, v]) => `${k} ${mb(v)}`).concat(`wasm growth ${mb(this.wasmGrowth)}`).join(', ')
  }
}

const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`
