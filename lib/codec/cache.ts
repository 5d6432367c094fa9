/**
 * Per-container cache of compiled schemas, keyed by registry id. Concurrent lookups of one id
 * share one request; a lookup that threw (registry outage) is forgotten so the retried batch asks
 * again; "does not exist" answers are remembered briefly, so a burst of records with a bad id costs
 * one request, yet a schema registered a moment later is still found.
 */
import type { CompiledAvro } from './avro.js'

export type SchemaLookup = { found: true; compiled: CompiledAvro } | { found: false; reason: string }

/** How long a "no such schema" answer is trusted: long enough for one batch, short enough to notice a late registration. */
const NOT_FOUND_TTL_MS = 60_000

export class SchemaCache<K> {
  private readonly entries = new Map<K, { promise: Promise<SchemaLookup>; notFoundAt?: number }>()

  constructor(private readonly now: () => number = Date.now) {}

  get(key: K, load: () => Promise<SchemaLookup>): Promise<SchemaLookup> {
    const hit = this.entries.get(key)
    if (hit && (hit.notFoundAt === undefined || this.now() - hit.notFoundAt < NOT_FOUND_TTL_MS)) return hit.promise
    const entry: { promise: Promise<SchemaLookup>; notFoundAt?: number } = { promise: load() }
    this.entries.set(key, entry)
    entry.promise.then(
      (r) => {
        if (!r.found) entry.notFoundAt = this.now()
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key)
      },
    )
    return entry.promise
  }

  get size(): number {
    return this.entries.size
  }
}
