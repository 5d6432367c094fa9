/**
 * docs/engines.md shows each engine's configuration exactly as the interop suite runs it: every
 * `# --- snippet: NAME ---` block of test/interop/engine.py and rest_spark.py appears verbatim (dedented) in the doc.
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
// engine.py holds the DynamoDB-catalog snippets; rest_spark.py Spark's REST catalog one.
const engine = ['engine.py', 'rest_spark.py'].map((f) => readFileSync(join(here, f), 'utf8')).join('\n')
const doc = readFileSync(join(here, '..', '..', 'docs', 'engines.md'), 'utf8')

function snippets(): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of engine.matchAll(/^( *)# --- snippet: (\w+) ---\n([\s\S]*?)^ *# --- end ---$/gm)) {
    const indent = m[1]!.length
    out.set(m[2]!, m[3]!.split('\n').map((l) => l.slice(indent)).join('\n').trimEnd())
  }
  return out
}

it('docs/engines.md shows the tested configuration of Spark, PyIceberg and DuckDB verbatim', () => {
  const found = snippets()
  expect([...found.keys()].sort()).toEqual(['duckdb', 'pyiceberg', 'spark', 'spark_rest'])
  for (const [name, text] of found) expect(doc, `snippet '${name}' of engine.py is not in docs/engines.md`).toContain(text)
})

it('docs/engines.md names the pinned versions test/interop/install.sh installs', () => {
  const install = readFileSync(join(here, 'install.sh'), 'utf8')
  const pins = Object.fromEntries([...install.matchAll(/^([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]))
  for (const key of ['PYICEBERG', 'PYARROW', 'PYSPARK', 'ICEBERG', 'DUCKDB', 'DUCKDB_ICEBERG']) expect(doc, key).toContain(pins[key])
})
