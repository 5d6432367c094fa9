/**
 * The architecture checker behind test/architecture.test.ts: module imports parsed with a regex
 * (no TypeScript API: the native compiler has none), checked against lib/layers.ts. Pure: it takes
 * `path → source text` (repository-relative, `/`-separated), so tests can feed it small graphs.
 */
import { dirname, join, normalize } from 'node:path/posix'
import { EXTRA_FACES, FORBIDDEN, LAYERS, type Layer } from '../../lib/layers.js'

export type Rule = 'face' | 'layer' | 'forbidden' | 'unplaced' | 'folder-cycle' | 'module-cycle'

export interface Violation {
  rule: Rule
  file: string
  /** The specifier as written (cycles: the modules or folders of the cycle). */
  import: string
  message: string
}

/** An allowed exception: `from` (a file or a unit) may import `to` (a file or a unit) though a rule says no. */
export interface Exception {
  from: string
  to: string
  rules: Rule[]
  why: string
}

export interface Import {
  spec: string
  /** The resolved module path (`.js` → `.ts` when the source exists). */
  target: string
  /** `import type` / `export type`: erased at run time, so no edge of the run-time module graph. */
  typeOnly: boolean
}

const STATIC = /^[ \t]*(import|export)(\s+type)?\b[^;'"()=]*?\bfrom\s*['"]([^'"]+)['"]/gm
const BARE = /^[ \t]*import\s*['"]([^'"]+)['"]/gm
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g

/** Relative imports of a module: static `import`/`export … from`, side-effect imports, `import()` (also `typeof import()`). */
export function parseImports(file: string, text: string, exists: (path: string) => boolean): Import[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^[ \t]*\/\/.*$/gm, '')
  const found: { spec: string; typeOnly: boolean }[] = []
  for (const m of code.matchAll(STATIC)) {
    // `import { type A, type B }` is erased too.
    const clause = m[0].slice(m[0].indexOf(m[1]!) + m[1]!.length, m[0].lastIndexOf('from')).trim()
    const names = /^\{([^}]*)\}$/.exec(clause)?.[1]?.split(',').map((s) => s.trim()).filter(Boolean)
    const inlineTypesOnly = names !== undefined && names.length > 0 && names.every((n) => n.startsWith('type '))
    found.push({ spec: m[3]!, typeOnly: !!m[2] || inlineTypesOnly })
  }
  for (const m of code.matchAll(BARE)) found.push({ spec: m[1]!, typeOnly: false })
  for (const m of code.matchAll(DYNAMIC)) {
    const typeOnly = /typeof\s*$/.test(code.slice(Math.max(0, m.index - 12), m.index))
    found.push({ spec: m[1]!, typeOnly })
  }
  return found.filter((f) => f.spec.startsWith('.')).map((f) => ({ ...f, target: resolve(file, f.spec, exists) }))
}

function resolve(file: string, spec: string, exists: (path: string) => boolean): string {
  const path = normalize(join(dirname(file), spec))
  if (exists(path)) return path
  const ts = path.replace(/\.js$/, '.ts')
  return exists(ts) ? ts : path
}

/** `lib/<folder>` for a folder's module, `lib/<name>.ts` for a root module, else the top directory. */
export function unitOf(path: string): string {
  const parts = path.split('/')
  if (parts[0] === 'lib') return parts.length > 2 ? `lib/${parts[1]}` : path
  return parts[0]!
}

const isFolder = (unit: string) => unit.startsWith('lib/') && !/\.[cm]?[jt]s$/.test(unit)

export interface CheckOptions {
  layers?: Layer[]
  forbidden?: typeof FORBIDDEN
  exceptions?: Exception[]
}

/** Every violation of the face rule, the layer order, the forbidden arrows and acyclicity in `modules`. */
export function checkArchitecture(modules: Map<string, string>, opts: CheckOptions = {}): Violation[] {
  const layers = opts.layers ?? LAYERS
  const forbidden = opts.forbidden ?? FORBIDDEN
  const exceptions = opts.exceptions ?? []
  const levelOf = new Map(layers.flatMap((l) => l.modules.map((m) => [m, l] as const)))
  const exists = (p: string) => modules.has(p)
  const out: Violation[] = []
  const excused = (file: string, target: string, rule: Rule) =>
    exceptions.some((e) => e.rules.includes(rule) && (e.from === file || e.from === unitOf(file)) && (e.to === target || e.to === unitOf(target)))
  const report = (v: Violation, target?: string) => {
    if (target === undefined || !excused(v.file, target, v.rule)) out.push(v)
  }

  const runtime = new Map<string, string[]>()
  const folders = new Map<string, Map<string, string>>() // unit → unit → one `file imports spec` example
  const unplaced = new Set<string>()
  for (const [file, text] of modules) {
    const from = unitOf(file)
    const fromLayer = levelOf.get(from)
    if (!fromLayer && !unplaced.has(from)) {
      unplaced.add(from)
      report({ rule: 'unplaced', file, import: '', message: `${from} (${file}) is in no layer of lib/layers.ts: place it (and describe it in docs/architecture.md)` })
    }
    const edges: string[] = []
    for (const imp of parseImports(file, text, exists)) {
      if (!imp.typeOnly) edges.push(imp.target)
      const to = unitOf(imp.target)
      if (to === from) continue
      const where = `${file} imports '${imp.spec}' (${imp.target})`
      // An arrow excused against the layer order (an allowed upward import) is left out of the
      // folder graph: a folder cycle that exists only through it is that same, listed exception.
      if (!excused(file, imp.target, 'layer')) {
        if (!folders.has(from)) folders.set(from, new Map())
        if (!folders.get(from)!.has(to)) folders.get(from)!.set(to, where)
      }
      if (isFolder(to) && imp.target !== `${to}/index.ts` && EXTRA_FACES[to]?.face !== imp.target) {
        report({ rule: 'face', file, import: imp.spec, message: `${where}: a deep import into ${to} — import its face, ${to}/index.ts` }, imp.target)
      }
      const toLayer = levelOf.get(to)
      if (fromLayer && toLayer) {
        if (toLayer.level > fromLayer.level) {
          report({ rule: 'layer', file, import: imp.spec, message: `${where}: ${from} (level ${fromLayer.level}, ${fromLayer.name}) must not import ${to} (level ${toLayer.level}, ${toLayer.name}): lower levels never import higher ones` }, imp.target)
        } else if (toLayer.level === fromLayer.level) {
          const peers = fromLayer.peers ?? {}
          const allowed = [...(peers[from] ?? []), ...(peers['*'] ?? [])]
          if (!allowed.includes(to) && !allowed.includes('*')) {
            report({ rule: 'layer', file, import: imp.spec, message: `${where}: ${from} and ${to} are both on level ${fromLayer.level} (${fromLayer.name}) and ${from} → ${to} is not a listed peer arrow` }, imp.target)
          }
        }
      }
      const ban = forbidden.find((f) => f.from === from && f.to === to)
      if (ban) report({ rule: 'forbidden', file, import: imp.spec, message: `${where}: ${from} must not import ${to} — ${ban.why}` }, imp.target)
    }
    runtime.set(file, edges)
  }

  for (const cycle of cycles(new Map([...folders].map(([u, m]) => [u, [...m.keys()]])))) {
    const path = [...cycle, cycle[0]!]
    const steps = path.slice(0, -1).map((u, i) => folders.get(u)!.get(path[i + 1]!)!)
    report({ rule: 'folder-cycle', file: steps[0]!.split(' ')[0]!, import: path.join(' → '), message: `import cycle between folders ${path.join(' → ')}: ${steps.join('; ')}` })
  }
  for (const cycle of cycles(runtime)) {
    const path = [...cycle, cycle[0]!]
    report({ rule: 'module-cycle', file: cycle[0]!, import: path.join(' → '), message: `import cycle between modules (run-time imports): ${path.join(' → ')}` })
  }
  return out
}

/**
 * One cycle per strongly connected component of more than one node (or a self-loop), in a
 * deterministic order (Tarjan's algorithm, then a shortest way round from the component's first node).
 */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        comp.push(w)
      } while (w !== v)
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(comp.sort())
    }
  }
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v)
  return components.map((comp) => shortestLoop(graph, comp))
}

function shortestLoop(graph: Map<string, string[]>, comp: string[]): string[] {
  const inComp = new Set(comp)
  const start = comp[0]!
  const prev = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!
    for (const w of graph.get(v) ?? []) {
      if (!inComp.has(w)) continue
      if (w === start) {
        const loop = [v]
        while (loop[0] !== start) loop.unshift(prev.get(loop[0]!)!)
        return loop
      }
      if (!prev.has(w)) {
        prev.set(w, v)
        queue.push(w)
      }
    }
  }
  return comp
}
