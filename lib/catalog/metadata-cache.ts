/**
 * Parsed table metadata by metadata-file location, for warm Lambda containers (DESIGN.md
 * invariant 10: a writer's table load must not grow with history). A metadata file is never
 * rewritten — every commit writes a new one under a new name — so an entry keyed by location is
 * never stale: a load still reads the catalog pointer (one small request), and only parses the
 * file when the pointer moved. Least recently used entries go beyond FLOE_METADATA_CACHE_ENTRIES.
 *
 * Callers treat TableMetadata as immutable (every change builds a new object), so the cached
 * object is shared, not copied.
 */
import { readTableMetadata, type TableMetadata } from '../iceberg/index.js'
import type { FileIO } from '../io/index.js'

export class MetadataCache {
  readonly #entries = new Map<string, Promise<TableMetadata>>()
  hits = 0
  misses = 0

  constructor(readonly maxEntries: number) {}

  /** The metadata at `location`, parsed once per location. A failed read is not cached. */
  read(io: FileIO, location: string): Promise<TableMetadata> {
    const cached = this.#entries.get(location)
    if (cached) {
      this.hits++
      this.#entries.delete(location)
      this.#entries.set(location, cached)
      return cached
    }
    this.misses++
    const loading = readTableMetadata(io, location)
    this.#remember(location, loading)
    loading.catch(() => this.#entries.get(location) === loading && this.#entries.delete(location))
    return loading
  }

  /** Record metadata this process just wrote (a commit), so the next load needs no read. */
  put(location: string, metadata: TableMetadata): void {
    this.#remember(location, Promise.resolve(metadata))
  }

  get size(): number {
    return this.#entries.size
  }

  #remember(location: string, value: Promise<TableMetadata>): void {
    if (this.maxEntries <= 0) return
    this.#entries.delete(location)
    this.#entries.set(location, value)
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
  }
}
