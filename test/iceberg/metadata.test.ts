import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import { decodeMetadataBytes } from '../../lib/iceberg/metadata-io.js'
import {
  addSchema,
  appendMetadataLog,
  currentSchema,
  currentSnapshot,
  defaultSpec,
  newTableMetadata,
  parseTableMetadata,
  serializeTableMetadata,
} from '../../lib/iceberg/metadata.js'
import { parseJson } from '../../lib/iceberg/json.js'
import { ICEBERG, metadataJsonFiles, rel } from './fixture-tables.js'

/** Files that must be rejected, with (part of) the message Iceberg-Java gives for them. */
const BROKEN: Record<string, string> = {
  'apache-iceberg/core/src/test/resources/TableMetadataUnsupportedVersion.json': 'Cannot read unsupported version 42',
  'jankaul-iceberg-rust/iceberg-rust-spec/testdata/table_metadata/TableMetadataUnsupportedVersion.json': 'Cannot read unsupported version 4',
  // iceberg-rust's "unsupported" file says v3 but has only the v1 singular schema.
  'apache-iceberg-rust/crates/iceberg/testdata/table_metadata/TableMetadataUnsupportedVersion.json': 'schemas must exist in format v3',
  'apache-iceberg/core/src/test/resources/TableMetadataV1MissingSchemaType.json': 'Cannot parse type from json:',
  'apache-iceberg/core/src/test/resources/TableMetadataV2CurrentSchemaNotFound.json': 'Cannot find schema with current-schema-id=2 from schemas',
  'apache-iceberg-go/table/testdata/TableMetadataV2CurrentSchemaNotFound.json': 'Cannot find schema with current-schema-id=2 from schemas',
  'apache-iceberg/core/src/test/resources/TableMetadataV2MissingLastPartitionId.json': 'last-partition-id must exist in format v2',
  'apache-iceberg/core/src/test/resources/TableMetadataV2MissingPartitionSpecs.json': 'partition-specs must exist in format v2',
  'apache-iceberg/core/src/test/resources/TableMetadataV2MissingSchemas.json': 'schemas must exist in format v2',
  'apache-iceberg/core/src/test/resources/TableMetadataV2MissingSortOrder.json': 'sort-orders must exist in format v2',
  'apache-iceberg-go/table/testdata/TableMetadataV1NoValidSchema.json': 'no valid schema configuration found',
  'duckdb-iceberg/data/persistent/bad_data/bad_iceberg_metadata.json': 'Cannot parse table metadata JSON',
  'iceberg-cxx/tests/metadata/broken1.metadata.json': 'Cannot parse table metadata JSON',
  'iceberg-cxx/tests/metadata/broken2.metadata.json': 'Cannot parse table metadata JSON',
  'iceberg-cxx/tests/metadata/empty.metadata.json': 'the file is empty',
  // BigQuery's placeholder "v0" holds only properties and current-snapshot-id.
  'duckdb-iceberg/data/persistent/big_query_error/metadata/v0.metadata.json': 'Cannot parse missing int: format-version',
}

/** JSON files in the corpus that are not table metadata (Avro schemas, icebird's decoded dumps). */
const NOT_METADATA = [
  /apache-iceberg-rust\/crates\/iceberg\/testdata\/avro_schema_/,
  /icebird\/test\/files\/[^/]+\.json$/,
]

const files = metadataJsonFiles().filter((f) => !NOT_METADATA.some((re) => re.test(rel(f))))

describe('every table metadata file in the fixtures', () => {
  it('covers the corpus (sanity: the fixture walk found the files)', () => {
    expect(files.length).toBeGreaterThan(200)
    for (const f of Object.keys(BROKEN)) expect(files.map(rel)).toContain(f)
  })

  for (const file of files.filter((f) => BROKEN[rel(f)] !== undefined)) {
    it(`rejects ${rel(file)} with a clear IcebergError`, () => {
      const run = () => decodeMetadataBytes(file, readFileSync(file))
      expect(run).toThrow(IcebergError)
      expect(run).toThrow(BROKEN[rel(file)]!)
      expect(run).toThrow(file) // the message names the file
    })
  }

  for (const file of files.filter((f) => BROKEN[rel(f)] === undefined)) {
    it(`parses ${rel(file)} and survives serialize → parse unchanged`, () => {
      const md = decodeMetadataBytes(file, readFileSync(file))
      expect([1, 2, 3]).toContain(md['format-version'])
      expect(currentSchema(md).type).toBe('struct')
      expect(defaultSpec(md).fields).toBeInstanceOf(Array)
      expect(md.snapshots.filter((s) => typeof s['snapshot-id'] !== 'bigint')).toEqual([])
      expect(md['format-version'] === 1 || typeof md['last-sequence-number'] === 'bigint').toBe(true)
      const again = parseTableMetadata(serializeTableMetadata(md))
      expect(again).toEqual(md)
    })
  }
})

const v2Valid = `${ICEBERG}/apache-iceberg/core/src/test/resources/TableMetadataV2Valid.json`
const v1Valid = `${ICEBERG}/apache-iceberg/core/src/test/resources/TableMetadataV1Valid.json`

describe('lossless metadata', () => {
  it('keeps 64-bit ids exact and unknown keys through a read-modify-write', () => {
    const text = readFileSync(`${ICEBERG}/apache-iceberg/core/src/test/resources/TableMetadataStatisticsFiles.json`, 'utf8')
    const md = parseTableMetadata(text.replace('"format-version"', '"x-vendor-field": {"id": 9223372036854775807, "f": 0.1}, "format-version"'))
    md.properties['floe.touched'] = 'yes'
    const out = serializeTableMetadata(md)
    expect(out).toContain('"x-vendor-field": {\n    "id": 9223372036854775807,\n    "f": 0.1\n  }')
    expect(out).toContain('"statistics"')
    const back = parseJson(out) as Record<string, unknown>
    expect((back.statistics as { 'snapshot-id': unknown }[])[0]!['snapshot-id']).toBe(3055729675574597004n)
    expect((back.properties as Record<string, string>)['floe.touched']).toBe('yes')
  })

  it('reads a v2 table with the current snapshot, refs and sort orders', () => {
    const md = parseTableMetadata(readFileSync(v2Valid, 'utf8'))
    expect(md['current-snapshot-id']).toBe(3055729675574597004n)
    expect(currentSnapshot(md)?.['parent-snapshot-id']).toBe(3051729675574597004n)
    expect(md['last-sequence-number']).toBe(34n)
    expect(md['sort-orders'][0]!.fields).toHaveLength(2)
    expect(md.refs.main).toEqual({ 'snapshot-id': 3055729675574597004n, type: 'branch' })
  })

  it('normalises v1 singular schema and partition-spec into lists, and writes v1 back with both', () => {
    const md = parseTableMetadata(readFileSync(v1Valid, 'utf8'))
    expect(md.schemas).toHaveLength(1)
    expect(md['current-schema-id']).toBe(0)
    expect(md['partition-specs']).toEqual([{ 'spec-id': 0, fields: [{ name: 'x', transform: 'identity', 'source-id': 1, 'field-id': 1000 }] }])
    expect(md['last-partition-id']).toBe(1000)
    expect(md).not.toHaveProperty('schema')
    const out = parseJson(serializeTableMetadata(md)) as Record<string, unknown>
    expect(out['format-version']).toBe(1)
    expect(out.schema).toEqual(md.schemas[0])
    expect(out['partition-spec']).toEqual(md['partition-specs'][0]!.fields)
    expect(out).not.toHaveProperty('last-sequence-number')
  })

  it('reads v1 metadata that lists schemas and specs without their ids, as PyIceberg and Go do', () => {
    const dir = `${ICEBERG}/apache-iceberg-go/table/testdata`
    const a = parseTableMetadata(readFileSync(`${dir}/TableMetadataV1SchemasWithoutCurrentId.json`, 'utf8'))
    expect(currentSchema(a).fields.length).toBeGreaterThan(0)
    const b = parseTableMetadata(readFileSync(`${dir}/TableMetadataV1PartitionSpecsWithoutDefaultId.json`, 'utf8'))
    expect(b['default-spec-id']).toBe(2)
  })

  it('creates new v2 metadata and adds schemas with fresh ids', () => {
    const schema = { type: 'struct' as const, 'schema-id': 0, fields: [{ id: 1, name: 'a', required: false, type: 'long' }] }
    const md = newTableMetadata({ location: 's3://b/db/t/', schema, nowMs: 5 })
    expect(md.location).toBe('s3://b/db/t')
    expect(md['last-column-id']).toBe(1)
    expect(md['last-partition-id']).toBe(999)
    expect(parseTableMetadata(serializeTableMetadata(md))).toEqual(md)
    const wider = { ...schema, fields: [...schema.fields, { id: 2, name: 'b', required: false, type: 'string' }] }
    const md2 = addSchema(md, wider)
    expect(md2['current-schema-id']).toBe(1)
    expect(md2['last-column-id']).toBe(2)
    expect(addSchema(md2, wider).schemas).toHaveLength(2) // same fields: reused, not duplicated
  })
})

describe('metadata log', () => {
  const base = newTableMetadata({ location: 's3://b/t', schema: { type: 'struct', 'schema-id': 0, fields: [] } })
  const withLog = (n: number, props: Record<string, string>) => ({
    ...base,
    properties: props,
    'metadata-log': Array.from({ length: n }, (_, i) => ({ 'timestamp-ms': i, 'metadata-file': `s3://b/t/metadata/${i}.metadata.json` })),
  })

  it('keeps at most write.metadata.previous-versions-max entries, oldest dropped first', () => {
    const { metadata, obsolete } = appendMetadataLog(withLog(3, { 'write.metadata.previous-versions-max': '3' }), { path: 's3://b/t/metadata/new.json', lastUpdatedMs: 99 })
    expect(metadata['metadata-log'].map((e) => e['metadata-file'])).toEqual([
      's3://b/t/metadata/1.metadata.json',
      's3://b/t/metadata/2.metadata.json',
      's3://b/t/metadata/new.json',
    ])
    expect(obsolete).toEqual([]) // deletion not enabled
  })

  it('falls back to 100 when write.metadata.previous-versions-max is not a number', () => {
    const { metadata } = appendMetadataLog(withLog(100, { 'write.metadata.previous-versions-max': 'lots' }), { path: 'p', lastUpdatedMs: 1 })
    expect(metadata['metadata-log']).toHaveLength(100)
  })

  it('defaults to 100 entries and lists dropped files for deletion when delete-after-commit is enabled', () => {
    const { metadata, obsolete } = appendMetadataLog(withLog(100, { 'write.metadata.delete-after-commit.enabled': 'true' }), { path: 'p', lastUpdatedMs: 1 })
    expect(metadata['metadata-log']).toHaveLength(100)
    expect(obsolete).toEqual(['s3://b/t/metadata/0.metadata.json'])
  })
})
