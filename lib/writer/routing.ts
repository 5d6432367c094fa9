/**
 * Routing: which table(s) a record goes to, compiled once from `FLOE_ROUTES` (lib/config.ts
 * RoutesSchema) into a function that runs per record.
 *
 * - Every route whose topic matches (exact `topic`, `topicPattern` regex, or neither = all
 *   topics) contributes its tables; a record may go to several tables (duplicates collapse).
 * - `{ table }`: a static table; `{topic}` in the name is replaced by the record's topic.
 * - `{ field, match }`: the field's value (dotted path, stringified) is tested against each
 *   table's regex; every matching table is taken.
 * - `{ tableFromField }`: the field's value names the table (optionally `namespace` and `prefix`),
 *   confined to that namespace and prefix (and the `allow` pattern, if any); never a table that
 *   static routes or `tables` name, unless `allowStatic`; at most FLOE_MAX_TABLE_NAME_LENGTH.
 * - A record no route matched follows `unrouted`: `dead-letter` (with the reason), `drop`
 *   (counted by the caller), or `{ table }` (a default table).
 *
 * Table names are normalised to `namespace.table` by lib/catalog's normalizeTableName (the
 * rule lives in lib/catalog/identifier.ts), applied to names from config and from record values
 * alike; topic `Orders-EU.v2` in `{topic}` → `orders_eu_v2`.
 */
import { RE2JS } from 're2js'
import { DEFAULT_LIMITS, type RecordLimits, type Routes, type TableOptions } from '../config.js'
import { normalizeTableName, sanitizeName } from '../catalog/index.js'
import { excerpt } from './guard.js'

export type RouteResult =
  | { kind: 'tables'; tables: string[] }
  | { kind: 'dead-letter'; reason: string }
  | { kind: 'drop'; reason: string }

export interface Router {
  /** Tables for one record. `value` is the decoded value (undefined when there is none). */
  route(topic: string, value: Record<string, unknown> | undefined): RouteResult
  /** Options of a table (by normalised `namespace.table`): `tables[...]` or `tableDefaults`. */
  options(table: string): TableOptions
  /** True when some route needs the decoded value (field / tableFromField routes). */
  readonly needsValue: boolean
  /** True when a route `topic` matches needs the decoded value: else its records' tables follow from the topic alone. */
  needsValueFor(topic: string): boolean
}

/** Field value at a dotted path (`a.b.c`); a key containing dots is tried whole first. */
export function fieldValue(value: Record<string, unknown> | undefined, path: string): unknown {
  if (value === undefined) return undefined
  if (path in value) return value[path]
  let cur: unknown = value
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined
    cur = (cur as Record<string, unknown>)[key]
  }
  return cur
}

const scalarText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : undefined

type Compiled = {
  topic: (t: string) => boolean
  tables: (topic: string, value: Record<string, unknown> | undefined, out: Set<string>, problems: string[]) => void
  needsValue: boolean
}

type RouteCtx = { i: number; norm: (n: string) => string; ns: string; statics: Set<string>; limits: Pick<RecordLimits, 'maxTableNameLength'> }

export function compileRoutes(routes: Routes, limits: Pick<RecordLimits, 'maxTableNameLength'> = DEFAULT_LIMITS): Router {
  const ns = routes.defaultNamespace
  const norm = (n: string) => normalizeTableName(n, ns)
  const statics = staticTables(routes)
  const compiled: Compiled[] = routes.routes.map((r, i) => {
    const topicTest =
      r.topic !== undefined ? (t: string) => t === r.topic : r.topicPattern !== undefined ? regexTest(r.topicPattern) : () => true
    const ctx: RouteCtx = { i, norm, ns, statics, limits }
    const tables = 'table' in r ? templateRoute(r.table, ctx) : 'match' in r ? matchRoute(r, ctx) : fieldRoute(r, ctx)
    return { topic: topicTest, needsValue: !('table' in r), tables }
  })

  const options = new Map<string, TableOptions>()
  for (const [name, opts] of Object.entries(routes.tables)) options.set(norm(name), opts)
  const unrouted = routes.unrouted
  const defaultTable = typeof unrouted === 'object' ? norm(unrouted.table) : undefined

  const needsValue = compiled.some((c) => c.needsValue)
  // Without field routes a record's tables follow from its topic alone: one result per topic
  // (the mapping's topics, like templateRoute's names), shared by its records — nothing changes a
  // result or its `tables` in place.
  const byTopic = new Map<string, RouteResult>()
  const valueTopics = new Map<string, boolean>()
  return {
    needsValue,
    needsValueFor(topic) {
      let needs = valueTopics.get(topic)
      if (needs === undefined) valueTopics.set(topic, (needs = compiled.some((c) => c.needsValue && c.topic(topic))))
      return needs
    },
    options: (table) => options.get(table) ?? routes.tableDefaults,
    route(topic, value) {
      if (needsValue) return routeOnce(topic, value)
      let routed = byTopic.get(topic)
      if (routed === undefined) byTopic.set(topic, (routed = routeOnce(topic, undefined)))
      return routed
    },
  }

  function routeOnce(topic: string, value: Record<string, unknown> | undefined): RouteResult {
    const out = new Set<string>()
    const problems: string[] = []
    for (const c of compiled) if (c.topic(topic)) c.tables(topic, value, out, problems)
    if (out.size > 0) return { kind: 'tables', tables: [...out] }
    const reason = `no route matched topic '${topic}'${problems.length ? ` (${problems.join('; ')})` : ''}`
    if (defaultTable !== undefined) return { kind: 'tables', tables: [defaultTable] }
    if (unrouted === 'drop') return { kind: 'drop', reason }
    return { kind: 'dead-letter', reason }
  }
}

/** A `table` route: a fixed name, or a template of `{topic}` (names cached per topic). */
function templateRoute(template: string, { i, norm, limits }: RouteCtx): Compiled['tables'] {
  if (!template.includes('{topic}')) {
    const fixed = norm(template)
    return (_t, _v, out) => void out.add(fixed)
  }
  const cache = new Map<string, string>()
  return (t, _v, out, problems) => {
    let name = cache.get(t)
    if (name === undefined) {
      try {
        name = norm(template.replaceAll('{topic}', sanitizeName(t)))
      } catch (err) {
        problems.push(`routes[${i}]: ${(err as Error).message}`)
        return
      }
      if (name.length > limits.maxTableNameLength) {
        problems.push(`routes[${i}]: topic '${excerpt(t)}' makes table name ${JSON.stringify(excerpt(name))}, longer than FLOE_MAX_TABLE_NAME_LENGTH=${limits.maxTableNameLength}`)
        return
      }
      cache.set(t, name)
    }
    out.add(name)
  }
}

/** A `match` route: the tables whose pattern the field's scalar text matches. */
function matchRoute(r: Extract<Routes['routes'][number], { match: unknown }>, { norm }: RouteCtx): Compiled['tables'] {
  const tests = Object.entries(r.match).map(([table, pattern]) => [norm(table), regexTest(pattern)] as const)
  return (_t, v, out) => {
    const text = scalarText(fieldValue(v, r.field))
    if (text === undefined) return
    for (const [table, test] of tests) if (test(text)) out.add(table)
  }
}

/**
 * A `tableFromField` route, confined: the name is always `<namespace>.<prefix><sanitized value>`
 * (a `.` in the value is sanitised away, so it cannot pick another namespace), must match
 * `allow` when set, and is never a statically routed or configured table unless `allowStatic` says so.
 */
function fieldRoute(r: Extract<Routes['routes'][number], { tableFromField: unknown }>, { i, ns, statics, limits }: RouteCtx): Compiled['tables'] {
  const namespace = (r.namespace ?? ns).split('.').map(sanitizeName).join('.')
  const prefix = sanitizeName(r.prefix) === '' ? '' : r.prefix
  const allow = r.allow === undefined ? undefined : regexTest(`^(?:${r.allow})$`)
  const max = limits.maxTableNameLength
  return (_t, v, out, problems) => {
    const raw = fieldValue(v, r.tableFromField)
    const text = scalarText(raw)
    const field = `routes[${i}]: field '${r.tableFromField}'`
    if (text === undefined) {
      problems.push(`${field} ${raw === undefined ? 'is missing' : `is not a scalar (${excerpt(JSON.stringify(raw) ?? String(raw))})`}`)
      return
    }
    const shown = JSON.stringify(excerpt(text))
    if (prefix.length + text.length + namespace.length + 1 > max * 4) {
      problems.push(`${field} value ${shown} makes a table name longer than FLOE_MAX_TABLE_NAME_LENGTH=${max}`)
      return
    }
    const name = sanitizeName(prefix + text)
    if (name === '') {
      problems.push(`${field} value ${shown} is not a usable table name`)
      return
    }
    const table = `${namespace}.${name}`
    if (table.length > max) problems.push(`${field} value ${shown} makes table name ${JSON.stringify(excerpt(table))} (${table.length} characters), longer than FLOE_MAX_TABLE_NAME_LENGTH=${max}`)
    else if (allow !== undefined && !allow(name)) problems.push(`${field} value ${shown} makes table ${table}, which the route's allow pattern ${JSON.stringify(r.allow)} does not match`)
    else if (statics.has(table) && !r.allowStatic) problems.push(`${field} value ${shown} names ${table}, a statically routed table that dynamic routes may not write (set allowStatic on the route to allow it)`)
    else out.add(table)
  }
}

/**
 * Route regexes run on record data (`match`) and topic names, so they use RE2 semantics (the
 * `re2js` port: linear time in the input, no backtracking — `^(a+)+$` over 40 characters is
 * microseconds, not minutes). Patterns RE2 cannot run (backreferences, lookaround) are refused
 * at config load (lib/config.ts). Unanchored, like RegExp#test.
 */
export function regexTest(pattern: string): (s: string) => boolean {
  const re = RE2JS.compile(pattern)
  return (s) => re.matcher(s).find()
}

/** Every table a static route, a `match` route, `tables` or `unrouted` names: out of reach of dynamic routes. */
function staticTables(routes: Routes): Set<string> {
  const norm = (n: string) => normalizeTableName(n, routes.defaultNamespace)
  const out = new Set(Object.keys(routes.tables).map(norm))
  for (const r of routes.routes) {
    if ('table' in r && !r.table.includes('{topic}')) out.add(norm(r.table))
    if ('match' in r) for (const t of Object.keys(r.match)) out.add(norm(t))
  }
  if (typeof routes.unrouted === 'object') out.add(norm(routes.unrouted.table))
  return out
}
