import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SchemaError } from '../../lib/errors.js'
import { fromArrowSchema, toArrowSchema } from '../../lib/schema/arrow.js'
import type { IcebergType, NestedField, Schema } from '../../lib/schema/types.js'
import { indexById, maxFieldId } from '../../lib/schema/walk.js'
import { fixturesDir } from '../helpers/fixtures.js'

const root = fixturesDir('iceberg')
function metadataFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return metadataFiles(path)
    return name.endsWith('.metadata.json') ? [path] : []
  })
}

/** Every schema of every readable metadata file written by other engines (broken fixtures are lib/iceberg's concern). */
const schemas: { file: string; schema: Schema; lastColumnId: number }[] = metadataFiles(root).flatMap((path) => {
  let md: Record<string, unknown>
  try {
    md = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
  } catch {
    return []
  }
  const list = (Array.isArray(md.schemas) ? md.schemas : md.schema ? [md.schema] : []) as Schema[]
  return list.filter((s) => s && s.type === 'struct' && Array.isArray(s.fields)).map((schema) => ({ file: relative(root, path), schema, lastColumnId: Number(md['last-column-id']) }))
})

const UNMAPPED = /^(variant|geometry|geography|unknown)/
const usesUnmapped = (t: IcebergType): boolean =>
  typeof t === 'string' ? UNMAPPED.test(t) : t.type === 'struct' ? t.fields.some((f) => usesUnmapped(f.type)) : t.type === 'list' ? usesUnmapped(t.element) : usesUnmapped(t.key) || usesUnmapped(t.value)

/** The parts of a schema the Arrow mapping carries: names, ids, requiredness, types (decimal spelled one way). */
function normalize(t: IcebergType): unknown {
  if (typeof t === 'string') return t.replace(/^decimal\((\d+),\s*(\d+)\)$/, 'decimal($1, $2)')
  if (t.type === 'struct') return t.fields.map((f: NestedField) => [f.id, f.name, f.required, normalize(f.type)])
  if (t.type === 'list') return ['list', t['element-id'], t['element-required'], normalize(t.element)]
  return ['map', t['key-id'], normalize(t.key), t['value-id'], t['value-required'], normalize(t.value)]
}

describe('schemas written by other engines', () => {
  it('there are fixture schemas to check', () => {
    expect(schemas.length).toBeGreaterThan(20)
  })
  it('map to Arrow and back unchanged (or are refused with a SchemaError for types Floe does not write)', () => {
    const outcome = (schema: Schema): string => {
      try {
        const back = fromArrowSchema(toArrowSchema(schema))
        return JSON.stringify(normalize(back)) === JSON.stringify(normalize(schema)) ? 'same' : `changed: ${JSON.stringify(normalize(back))}`
      } catch (err) {
        return err instanceof SchemaError ? 'refused' : `failed: ${String(err)}`
      }
    }
    const wrong = schemas
      .map(({ file, schema }) => ({ file, want: usesUnmapped(schema) ? 'refused' : 'same', got: outcome(schema) }))
      .filter((r) => r.want !== r.got)
    expect(wrong).toEqual([])
  })
  it('index without duplicate ids, and never use an id above last-column-id', () => {
    const wrong = schemas.filter(({ schema, lastColumnId }) => {
      indexById(schema)
      return Number.isFinite(lastColumnId) && maxFieldId(schema) > lastColumnId
    })
    expect(wrong.map((w) => w.file)).toEqual([])
  })
})
