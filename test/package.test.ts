/**
 * The dependency policy (hyparquet's test/package.test.js habit): runtime dependencies are an
 * allow-list, and everything the Lambda code imports is one of them — a devDependency imported by
 * lib/ or functions/ would be missing from a production install.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; engines: { node: string } }

/** What each runtime dependency is for; adding one means adding it here, with a reason. */
const ALLOWED: Record<string, string> = {
  '@aws-crypto/sha256-js': 'SHA-256 for SigV4 signing of REST catalog requests',
  '@aws-lambda-powertools/logger': 'structured logs',
  '@aws-lambda-powertools/metrics': 'EMF metrics',
  '@aws-sdk/client-cloudformation': 'floe --stack NAME reads the deployed stack\'s outputs (CLI only, loaded on demand)',
  '@aws-sdk/client-dynamodb': 'control table and DynamoDB catalog',
  '@aws-sdk/client-glue': 'Glue catalog and Glue Schema Registry',
  '@aws-sdk/client-s3': 'FileIO for s3://',
  '@aws-sdk/client-secrets-manager': 'schema registry credentials',
  '@aws-sdk/lib-dynamodb': 'document client for the control table',
  '@smithy/signature-v4': 'SigV4 signing of REST catalog requests (s3tables, glue, execute-api)',
  '@middy/core': 'Lambda handler middleware (6.x: 7.x needs Node 22)',
  'apache-arrow': 'columnar building before Parquet',
  avsc: 'Avro manifests and Avro record values',
  fzstd: 'zstd-compressed table metadata written by other engines',
  hyparquet: 'Parquet footer for column sizes and split offsets',
  'lossless-json': '64-bit ids in table metadata and JSON values',
  'parquet-wasm': 'Parquet encoding',
  re2js: 'linear-time (RE2) route regexes over record data',
  tsx: 'runs the floe CLI (TypeScript, no build step)',
  zod: 'config validation',
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (/\.(ts|mjs)$/.test(name)) yield path
  }
}

/** Bare module specifiers imported (statically or dynamically) by a file; `import type` is erased, so it does not count. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8').replace(/^import type [^;\n]*\n/gm, '')
  const out: string[] = []
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)'([^'.][^']*)'/g)) out.push(m[1]!)
  return out
}

const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
const isBuiltin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec)

describe('dependency policy', () => {
  it('runtime dependencies are exactly the allow-list', () => {
    expect(Object.keys(pkg.dependencies).sort()).toEqual(Object.keys(ALLOWED).sort())
  })

  it('Lambda code (lib/ except local tooling, functions/) imports only runtime dependencies and Node built-ins', () => {
    const offenders: string[] = []
    const files = [...sources('lib'), ...sources('functions')].filter((f) => !f.startsWith(join('lib', 'local')) && !f.startsWith(join('lib', 'cli')))
    for (const file of files) {
      for (const spec of imports(file)) {
        if (isBuiltin(spec) || spec === 'aws-lambda') continue // aws-lambda: types only, erased
        const name = packageOf(spec)
        if (!(name in pkg.dependencies)) offenders.push(`${file} imports ${spec}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('no package is both a runtime and a dev dependency, and Node 20 is supported', () => {
    expect(Object.keys(pkg.dependencies).filter((d) => d in pkg.devDependencies)).toEqual([])
    expect(pkg.engines.node).toBe('>=20')
  })
})
