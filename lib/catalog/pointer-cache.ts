/**
 * The writer's table loads, cached per container for FLOE_CATALOG_POINTER_TTL_SECONDS
 * (docs/scale.md "Next ceilings": the catalog pointer read, ~1.2 read units per invocation on one
 * DynamoDB key per table, is the first key past 1 GB/s into one table).
 *
 * Why a pointer up to a TTL old is safe for the writer: it never commits data — the committer
 * appends files to whatever the table is when it swaps, through its own uncached catalog. The
 * writer takes only the schema, the partition spec and the properties from the table, and an
 * older one of each is still part of the table's metadata: files written with an older schema or
 * spec id are valid Iceberg (readers project by field id and keep every spec), exactly as files of
 * an invocation that loaded the table just before a change. A writer that evolves the schema
 * commits against the base it loaded: a stale base conflicts, this cache forgets the table, and
 * the reload after the conflict reads the catalog. A table this container creates or evolves is
 * cached as committed. Misses (no such table) are never cached.
 */
import { CommitConflictError, CommitStateUnknownError } from '../errors.js'
import type { TableMetadata } from '../iceberg/index.js'
import type { TableId } from './identifier.js'
import type { Catalog, CommitRequest, CreateTableOptions, LoadedTable } from './types.js'

export class PointerCachedCatalog implements Catalog {
  readonly #entries = new Map<string, { loaded: LoadedTable; at: number }>()
  hits = 0

  constructor(
    readonly inner: Catalog,
    readonly ttlMs: number,
    readonly maxEntries: number,
    readonly now: () => number = Date.now,
  ) {}

  async loadTable(id: TableId): Promise<LoadedTable> {
    const key = keyOf(id)
    const entry = this.#entries.get(key)
    if (entry !== undefined && this.now() - entry.at < this.ttlMs) {
      this.hits++
      return entry.loaded
    }
    const loaded = await this.inner.loadTable(id)
    this.#remember(key, loaded)
    return loaded
  }

  async createTable(id: TableId, opts: CreateTableOptions): Promise<LoadedTable> {
    const created = await this.inner.createTable(id, opts)
    this.#remember(keyOf(id), created)
    return created
  }

  async commit(id: TableId, req: CommitRequest): Promise<{ metadataLocation: string; metadata: TableMetadata }> {
    try {
      const out = await this.inner.commit(id, req)
      this.#remember(keyOf(id), out)
      return out
    } catch (err) {
      if (err instanceof CommitConflictError || err instanceof CommitStateUnknownError) this.#entries.delete(keyOf(id))
      throw err
    }
  }

  createNamespace(namespace: string, properties?: Record<string, string>): Promise<void> {
    return this.inner.createNamespace(namespace, properties)
  }

  listNamespaces(): Promise<string[]> {
    return this.inner.listNamespaces()
  }

  loadNamespace(namespace: string): Promise<Record<string, string> | undefined> {
    return this.inner.loadNamespace(namespace)
  }

  listTables(namespace: string): Promise<TableId[]> {
    return this.inner.listTables(namespace)
  }

  #remember(key: string, loaded: LoadedTable): void {
    if (this.ttlMs <= 0) return
    this.#entries.delete(key)
    this.#entries.set(key, { loaded, at: this.now() })
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
  }
}

const keyOf = (id: TableId) => `${id.namespace}\n${id.name}`

/** The catalog unchanged when the TTL is 0 (no caching), else wrapped. */
export function withPointerCache(catalog: Catalog, opts: { catalogPointerTtlMs: number; metadataCacheEntries: number }): Catalog {
  return opts.catalogPointerTtlMs > 0 ? new PointerCachedCatalog(catalog, opts.catalogPointerTtlMs, Math.max(1, opts.metadataCacheEntries)) : catalog
}
