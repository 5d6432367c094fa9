/**
 * Compiled parts shared by tables with the same schema. A coercer (coerce.ts) and an Arrow
 * builder (arrow-build.ts) are hundreds of closures for a 200-column schema — measured ~120 KB
 * per coercer and ~250 KB per builder — and an invocation that writes 50 tables of one shape
 * (dynamic tables routed by a field) compiled 50 of each: ~18 MB of the heap at the 1,200-file
 * event's peak (docs/benchmarks.md, "Writer memory: prepare and flush"). What they compile from
 * is the schema's fields (and the options), so one compilation serves every table whose fields
 * are the same JSON.
 *
 * Held weakly: a compiled part lives as long as a table state (or its schema) that uses it, as
 * before, and the key text is dropped with it; nothing is kept across invocations that no table
 * state keeps.
 */

/** Past this many keys the dead ones are swept. */
const SWEEP_AT = 256

export class SharedCompiled<T extends object> {
  readonly #byKey = new Map<string, WeakRef<T>>()

  /** The part compiled for `key`, compiled by `make` when no live one is held. */
  get(key: string, make: () => T): T {
    const live = this.#byKey.get(key)?.deref()
    if (live !== undefined) return live
    if (this.#byKey.size >= SWEEP_AT) this.#sweep()
    const made = make()
    this.#byKey.set(key, new WeakRef(made))
    return made
  }

  /** Keys held (tests). */
  get size(): number {
    return this.#byKey.size
  }

  #sweep(): void {
    for (const [key, ref] of this.#byKey) if (ref.deref() === undefined) this.#byKey.delete(key)
  }
}

/** The text that identifies what a schema's fields compile to. */
export const fieldsKey = (fields: unknown, ...options: unknown[]): string => `${JSON.stringify(options)}\n${JSON.stringify(fields)}`
