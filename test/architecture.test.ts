/**
 * The architecture (docs/architecture.md): every cross-folder import goes through the folder's face
 * (index.ts), no import runs against the layer order of lib/layers.ts or one of its forbidden
 * arrows, and neither folders nor modules import each other in a cycle. The second half feeds the
 * checker the violations issue #22 found, so a checker that reports nothing cannot pass.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LAYERS } from '../lib/layers.js'
import { checkArchitecture, cycles, parseImports, type Exception, type Rule } from './helpers/architecture.js'

/**
 * The allow-list: arrows the rules forbid that stay, each with its reason. Keep it tiny; an entry
 * whose import is gone fails the last test below, so the list cannot go stale.
 */
const EXCEPTIONS: Exception[] = [
  {
    from: 'lib/local/pipeline.ts',
    to: 'functions',
    rules: ['layer'],
    why: 'the local pipeline (`floe start`) drives the REAL writer and committer handlers (middy stack, summaries) — the same code path as Lambda; a handler factory stays beside its handler',
  },
  {
    from: 'lib/config-check.ts',
    to: 'lib/iceberg',
    rules: ['layer'],
    why: 'cold-start validation of FLOE_ROUTES partitionBy uses the spec\'s partition grammar and transform rules (pure functions), so a bad expression fails at loadConfig naming the key',
  },
  {
    from: 'lib/commit',
    to: 'lib/kafka',
    rules: ['forbidden'],
    why: 'the committer keys the offsets it commits (floe.offsets.<pipeline>) by topic-partition with lib/kafka\'s one partition-key rule (build/split/parse); it decodes no Kafka record',
  },
]

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts')) yield path.split('\\').join('/')
  }
}

const tree = () => new Map([...['lib', 'functions', 'infra', 'bin'].flatMap((d) => [...sources(d)])].map((f) => [f, readFileSync(f, 'utf8')]))

describe('the architecture of lib/, functions/, infra/ and bin/', () => {
  it('has no deep cross-folder import, no arrow against the layers, no cycle', () => {
    const found = checkArchitecture(tree(), { exceptions: EXCEPTIONS })
    expect(found.map((v) => `[${v.rule}] ${v.message}`)).toEqual([])
  })

  it('places every folder of lib/ in exactly one layer', () => {
    const placed = LAYERS.flatMap((l) => l.modules)
    expect(new Set(placed).size).toBe(placed.length)
    const folders = readdirSync('lib').filter((n) => statSync(join('lib', n)).isDirectory()).map((n) => `lib/${n}`)
    expect(folders.filter((f) => !placed.includes(f))).toEqual([])
  })

  it('is the order docs/architecture.md describes, level by level', () => {
    const doc = readFileSync('docs/architecture.md', 'utf8')
    const table = doc.slice(doc.indexOf('## The levels'), doc.indexOf('\n\n', doc.indexOf('| level |')))
    const described = new Map<number, string[]>()
    let level = -1
    for (const row of table.split('\n').filter((r) => /^\| [^-l]/.test(r) || /^\| \|/.test(r))) {
      const [first, modules] = row.split('|').slice(1, 3).map((c) => c.trim())
      if (first) level = Number.parseInt(first!, 10)
      described.set(level, [...(described.get(level) ?? []), ...[...modules!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, ''))])
    }
    expect(Object.fromEntries(described)).toEqual(Object.fromEntries(LAYERS.map((l) => [l.level, l.modules])))
  })

  it('gives every folder of lib/ a face that lists its surface by name (no export *)', () => {
    for (const dir of readdirSync('lib').filter((n) => statSync(join('lib', n)).isDirectory())) {
      const face = readFileSync(join('lib', dir, 'index.ts'), 'utf8')
      expect(face, `lib/${dir}/index.ts`).toMatch(/^\/\*\*/)
      expect(face, `lib/${dir}/index.ts`).not.toMatch(/^export (type )?\*/m)
    }
  })

  it("keeps lib/iceberg's Avro half behind its second face: the writer handler loads no avsc (EXTRA_FACES)", () => {
    const script = `
      import { createRequire } from 'node:module'
      const require = createRequire(import.meta.url)
      await import('./functions/writer.ts')
      const writer = Object.keys(require.cache).includes(require.resolve('avsc'))
      await import('./lib/iceberg/manifests.ts')
      console.log(JSON.stringify({ writer, manifests: Object.keys(require.cache).includes(require.resolve('avsc')) }))
    `
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ writer: false, manifests: true })
  })

  it('still needs every allow-list entry', () => {
    const without = checkArchitecture(tree(), { exceptions: [] })
    for (const e of EXCEPTIONS) expect(without.some((v) => e.rules.includes(v.rule) && (v.file === e.from || v.file.startsWith(`${e.from}/`))), `${e.from} → ${e.to}`).toBe(true)
  })
})

/** A small in-memory tree: `path → source`, every imported module present (as an empty file unless given). */
function graph(files: Record<string, string>, extra: string[] = []): Map<string, string> {
  const m = new Map(Object.entries(files))
  for (const p of extra) if (!m.has(p)) m.set(p, '')
  return m
}
const rules = (found: { rule: Rule }[]) => found.map((v) => v.rule).sort()

describe('the architecture checker', () => {
  it('reports control importing Iceberg types and datafile-json (deep and forbidden)', () => {
    const found = checkArchitecture(
      graph(
        { 'lib/control/pending.ts': "import { dataFileFromJSON } from '../iceberg/datafile-json.js'\nimport type { DataFile } from '../iceberg/types.js'\n" },
        ['lib/iceberg/datafile-json.ts', 'lib/iceberg/types.ts', 'lib/iceberg/index.ts'],
      ),
    )
    expect(rules(found)).toEqual(['face', 'face', 'forbidden', 'forbidden'])
    expect(found[0]!.message).toContain("lib/control/pending.ts imports '../iceberg/datafile-json.js'")
    expect(found.find((v) => v.rule === 'forbidden')!.message).toContain('lib/control must not import lib/iceberg')
    // Through the face it is still forbidden.
    const viaFace = checkArchitecture(graph({ 'lib/control/pending.ts': "import type { DataFile } from '../iceberg/index.js'" }, ['lib/iceberg/index.ts']))
    expect(rules(viaFace)).toEqual(['forbidden'])
  })

  it('reports lib/cli importing functions/ for createCommitterDeps (against the layers)', () => {
    const found = checkArchitecture(graph({ 'lib/cli/commit.ts': "import { createCommitterDeps } from '../../functions/committer.js'" }, ['functions/committer.ts']))
    expect(rules(found)).toEqual(['layer'])
    expect(found[0]!.message).toMatch(/lib\/cli\/commit\.ts imports '..\/..\/functions\/committer.js'.*lib\/cli \(level 6, tools\) must not import functions \(level 7/)
  })

  it('reports maintenance taking mapBounded through lib/commit/committer.ts (deep, and a same-level arrow not listed)', () => {
    const found = checkArchitecture(
      graph({
        'lib/maintenance/run.ts': "import { mapBounded } from '../commit/committer.js'",
        'lib/commit/committer.ts': "import { mapBounded } from '../concurrency.js'\nexport { mapBounded }\n",
        'lib/commit/index.ts': '',
        'lib/concurrency.ts': 'export const mapBounded = 1',
      }),
    )
    expect(rules(found)).toEqual(['face', 'layer'])
    expect(found.find((v) => v.rule === 'layer')!.message).toContain('lib/maintenance → lib/commit is not a listed peer arrow')
  })

  it('reports a deep import such as writer → catalog/types.js, and accepts the same import through the face', () => {
    const deep = checkArchitecture(graph({ 'lib/writer/tables.ts': "import type { TableId } from '../catalog/types.js'" }, ['lib/catalog/types.ts', 'lib/catalog/index.ts']))
    expect(rules(deep)).toEqual(['face'])
    expect(deep[0]!.message).toContain('a deep import into lib/catalog — import its face, lib/catalog/index.ts')
    const subFolder = checkArchitecture(graph({ 'lib/maintenance/read-rows.ts': "import { compileCoercer } from '../writer/columnar/index.js'" }, ['lib/writer/columnar/index.ts', 'lib/writer/index.ts']))
    expect(rules(subFolder)).toEqual(['face'])
    const viaFace = checkArchitecture(graph({ 'lib/writer/tables.ts': "import type {\n  TableId,\n} from '../catalog/index.js'" }, ['lib/catalog/index.ts']))
    expect(viaFace).toEqual([])
  })

  it('reports a cycle between folders and a cycle between modules', () => {
    const folderCycle = checkArchitecture(
      graph({
        'lib/io/index.ts': "export { parseKafkaEvent } from '../kafka/index.js'",
        'lib/kafka/index.ts': "import { createFileIO } from '../io/index.js'",
      }),
    )
    expect(rules(folderCycle)).toEqual(['folder-cycle', 'layer', 'layer', 'module-cycle'])
    expect(folderCycle.find((v) => v.rule === 'folder-cycle')!.import).toBe('lib/io → lib/kafka → lib/io')
    const moduleCycle = checkArchitecture(
      graph({
        'lib/writer/a.ts': "import { b } from './b.js'\nexport const a = 1",
        'lib/writer/b.ts': "import { c } from './c.js'\nexport const b = 1",
        'lib/writer/c.ts': "import { a } from './a.js'\nexport const c = 1",
        // Erased at run time: no edge.
        'lib/writer/d.ts': "import type { a } from './a.js'",
        'lib/writer/e.ts': "import { type d } from './d.js'",
      }),
    )
    expect(moduleCycle.map((v) => v.import)).toEqual(['lib/writer/a.ts → lib/writer/b.ts → lib/writer/c.ts → lib/writer/a.ts'])
  })

  it('reports a folder or root module no layer names, and honours an allow-list entry only for its rule', () => {
    expect(rules(checkArchitecture(graph({ 'lib/newthing/index.ts': '' })))).toEqual(['unplaced'])
    const files = graph({ 'lib/local/pipeline.ts': "import { createWriterHandler } from '../../functions/writer.js'" }, ['functions/writer.ts'])
    const exception: Exception = { from: 'lib/local/pipeline.ts', to: 'functions', rules: ['layer'], why: 'test' }
    expect(checkArchitecture(files, { exceptions: [exception] })).toEqual([])
    expect(rules(checkArchitecture(files, { exceptions: [{ ...exception, rules: ['face'] }] }))).toEqual(['layer'])
  })

  it('parses static, re-export, side-effect, dynamic and typeof imports, but not comments or packages', () => {
    const text = [
      "import { a } from './a.js'",
      "import type { B } from '../x/b.js'",
      "export { c } from './c.js'",
      "import './side.js'",
      "const { d } = await import('../y/d.js')",
      "type E = typeof import('./e.js')",
      "import { z } from 'zod'",
      "// import { no } from './commented.js'",
      "/** import { no } from './doc.js' */",
    ].join('\n')
    const found = parseImports('lib/w/f.ts', text, (p) => p !== 'lib/w/side.js')
    expect(found.map((i) => [i.spec, i.typeOnly])).toEqual([
      ['./a.js', false],
      ['../x/b.js', true],
      ['./c.js', false],
      ['./side.js', false],
      ['../y/d.js', false],
      ['./e.js', true],
    ])
    expect(found[1]!.target).toBe('lib/x/b.js')
    expect(parseImports('lib/w/f.ts', "import { a } from './a.js'", (p) => p === 'lib/w/a.ts')[0]!.target).toBe('lib/w/a.ts')
  })

  it('finds one shortest loop per cycle', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c', 'a']],
      ['c', ['a']],
      ['d', ['d']],
      ['e', []],
    ])
    expect(cycles(g)).toEqual([['a', 'b'], ['d']])
  })
})
