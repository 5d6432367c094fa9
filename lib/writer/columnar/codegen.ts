/**
 * Generated functions (struct-code.ts, arrow-build.ts, coerce.ts's row literals), one per distinct
 * source: a table's coercer and Arrow builder are compiled again for every invocation (every
 * TableSet, every file), and a fresh `new Function` starts cold each time — interpreted, then
 * optimized again (measured: ~250 ms interpreted plus ~275 ms of TurboFan for a 200-field
 * struct, per invocation). The same source returns the same function, so its closures share
 * their feedback and optimized code across invocations (and rows keep one hidden class).
 */

/** Distinct sources kept; past this the cache starts over (a container writes a bounded set of schemas). */
const MAX_SOURCES = 512

const cache = new Map<string, unknown>()

/** `new Function(...params, body)`, once per distinct source. */
export function generated<F>(params: readonly string[], body: string): F {
  const key = `${params.join(',')}\n${body}`
  let f = cache.get(key)
  if (f === undefined) {
    if (cache.size >= MAX_SOURCES) cache.clear()
    // oxlint-disable-next-line no-new-func -- sources are built from JSON.stringify-quoted names and numbers
    cache.set(key, (f = new Function(...params, body)))
  }
  return f as F
}
