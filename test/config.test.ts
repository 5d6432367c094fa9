import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadConfig, SETTINGS } from '../lib/config.js'
import { ConfigError } from '../lib/errors.js'

const base = { FLOE_WAREHOUSE: 's3://warehouse-bucket/prefix/' }

/** The ConfigError loadConfig throws for `env`, or a failure if it does not throw one. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ ...base, ...env })
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('loadConfig', () => {
  it('fills every default from a warehouse alone', () => {
    const c = loadConfig(base)
    expect(c).toMatchObject({
      pipeline: 'floe',
      controlTable: 'floe-control',
      warehouse: 's3://warehouse-bucket/prefix',
      catalog: 'dynamodb',
      catalogTable: 'iceberg',
      dlq: 's3://warehouse-bucket/prefix/_floe/dead-letters',
      valueFormat: 'json',
      memoryBudgetBytes: 256 * 1024 * 1024,
      targetFileBytes: 128 * 1024 * 1024,
      parquetCompression: 'zstd',
      parquetIntegerEncoding: 'plain',
      maxPendingBatches: 1000,
      spillThresholdBytes: 300 * 1024,
      leaseTtlMs: 300_000,
      awsMaxAttempts: 5,
    })
    expect(c.routes.routes).toEqual([{ table: '{topic}' }])
    expect(c.routes.unrouted).toBe('dead-letter')
    expect(c.schemaRegistry).toBeUndefined()
  })

  it('reads set values and treats an empty value as unset', () => {
    const c = loadConfig({ ...base, FLOE_TARGET_FILE_MB: '64', FLOE_CATALOG: 'glue', FLOE_PIPELINE: 'orders-v2', FLOE_MEMORY_BUDGET_MB: '' })
    expect(c.targetFileBytes).toBe(64 * 1024 * 1024)
    expect(c.catalog).toBe('glue')
    expect(c.pipeline).toBe('orders-v2')
    expect(c.memoryBudgetBytes).toBe(256 * 1024 * 1024)
  })

  it('refuses a compaction memory budget too small for its chunk, naming both settings', () => {
    expect(loadConfig({ ...base, FLOE_COMPACT_MEMORY_MB: '64', FLOE_COMPACT_CHUNK_MB: '4' }).compactMemoryBytes).toBe(64 * 1024 * 1024)
    expect(() => loadConfig({ ...base, FLOE_COMPACT_MEMORY_MB: '64', FLOE_COMPACT_CHUNK_MB: '8' })).toThrow(/FLOE_COMPACT_MEMORY_MB.*64 MB is less than 16 × FLOE_COMPACT_CHUNK_MB \(8 MB\)/)
  })

  it('requires FLOE_WAREHOUSE', () => {
    expect(() => loadConfig({})).toThrow(/FLOE_WAREHOUSE.*not set/)
  })

  it.each([
    ['FLOE_WAREHOUSE', 'http://bucket/x'],
    ['FLOE_WAREHOUSE', 'S3://Upper'],
    ['FLOE_CATALOG', 'hive'],
    ['FLOE_PIPELINE', 'has space'],
    ['FLOE_MEMORY_BUDGET_MB', 'lots'],
    ['FLOE_TARGET_FILE_MB', '0'],
    ['FLOE_TARGET_FILE_MB', '1.5'],
    ['FLOE_SPILL_THRESHOLD_KB', '400'],
    ['FLOE_MAX_PENDING_BATCHES', '-1'],
    ['FLOE_PARQUET_COMPRESSION', 'brotli'],
    ['FLOE_PARQUET_INTEGER_ENCODING', 'rle'],
    ['FLOE_VALUE_FORMAT', 'xml'],
    ['FLOE_GLUE_CATALOG_ID', '123'],
    ['FLOE_SCHEMA_REGISTRY_URL', 'not a url'],
    ['FLOE_AWS_MAX_ATTEMPTS', '99'],
  ])('rejects %s=%s with a ConfigError naming the variable and the value', (key, value) => {
    const err = configError({ [key]: value })
    expect(err.key).toBe(key)
    expect(err.message).toContain(key)
    expect(err.message).toContain(JSON.stringify(value))
    expect(err.retryable).toBe(false)
  })

  it('rejects an unknown FLOE_ variable and suggests the nearest setting', () => {
    const err = configError({ FLOE_MAX_PENDING_BATCH: '3' })
    expect(err.key).toBe('FLOE_MAX_PENDING_BATCH')
    expect(err.message).toContain('did you mean FLOE_MAX_PENDING_BATCHES?')
    expect(configError({ FLOE_SOMETHING_ELSE_ENTIRELY: '1' }).message).toContain('unknown setting')
  })

  it('ignores variables without the FLOE_ prefix', () => {
    expect(() => loadConfig({ ...base, AWS_REGION: 'eu-west-1', FLOEX: '1' })).not.toThrow()
  })

  describe('FLOE_ROUTES', () => {
    it('parses routes and fills table defaults', () => {
      const routes = { routes: [{ topic: 'orders', table: 'sales.orders' }], tables: { 'sales.orders': { partitionBy: ['day(ts)'] } } }
      const c = loadConfig({ ...base, FLOE_ROUTES: JSON.stringify(routes) })
      expect(c.routes.routes).toEqual([{ topic: 'orders', table: 'sales.orders' }])
      expect(c.routes.tables['sales.orders']).toMatchObject({ partitionBy: ['day(ts)'], autoCreate: true, evolveSchema: true })
      expect(c.routes.defaultNamespace).toBe('default')
    })

    it.each([
      ['{routes', /not valid JSON/],
      ['{\n  "routes": [\n    {"table": "t",}\n  ]\n}', /not valid JSON at line 3, column \d+/],
      ['{"routes":[]}', /\$\.routes: .*; got \[\]/],
      ['{"routes":[{"table":""}]}', /\$\.routes\[0\]\.table: Too small.*; got ""/],
      ['{"routes":[{"table":"t","bogus":1}]}', /\$\.routes\[0\]\.bogus: unknown key "bogus" \(known keys: .*table/],
      ['{"routes":[{"table":"t"}],"tabels":{}}', /\$\.tabels: unknown key "tabels" \(did you mean "tables"\?\)/],
      ['{"routes":[{"table":"t"}],"tables":{"db.t":{"partitonBy":[]}}}', /\$\.tables\["db\.t"\]\.partitonBy: unknown key .*did you mean "partitionBy"/],
      ['{"routes":[{"table":"t"}],"tables":{"db.t":{"partitionBy":[3]}}}', /\$\.tables\["db\.t"\]\.partitionBy\[0\]: .*; got 3/],
      ['{"routes":[{"table":"t"}],"tables":{"t":{"partitionBy":["bucket(0, ts)"]}}}', /\$\.tables\.t\.partitionBy\[0\]: partitionBy 'bucket\(0, ts\)'/],
      ['{"routes":[{"table":"t"}],"tableDefaults":{"partitionBy":["days(ts"]}}', /\$\.tableDefaults\.partitionBy\[0\]/],
      ['{"routes":[{"table":"t"}],"tables":{"t":{"partitionBy":["day(id)"],"columns":{"id":"long"}}}}', /day\(id\).*does not apply to column "id" of type long/],
      ['{"routes":[{"table":"t"}],"tables":{"t":{"columns":{"reading":"float64"}}}}', /\$\.tables\.t\.columns\.reading: expected an Iceberg primitive type.*; got "float64"/],
      ['{"routes":[{"topicPattern":"(","table":"t"}]}', /\$\.routes\[0\]: invalid regular expression "\("/],
      ['{"routes":[{"topic":"a","topicPattern":"b","table":"t"}]}', /routes\[0\]: set topic or topicPattern, not both/],
      ['{"routes":[{"table":"t"}],"formats":[{"topicPattern":"[","value":"json"}]}', /formats\[0\]: invalid regular expression/],
    ])('rejects %s with an error naming where in the JSON', (json, message) => {
      const err = configError({ FLOE_ROUTES: json })
      expect(err.key).toBe('FLOE_ROUTES')
      expect(err.message).toMatch(message)
    })
  })
})

describe('the floe process', () => {
  it('exits non-zero with a message naming the bad variable', () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FLOE_')))
    const r = spawnSync(process.execPath, ['bin/floe.mjs', 'init'], {
      encoding: 'utf8',
      env: { ...env, FLOE_WAREHOUSE: 's3://warehouse-bucket', FLOE_TARGET_FILE_MB: 'huge' },
    })
    expect(r.status).not.toBe(0)
    expect(r.stderr).toContain('FLOE_TARGET_FILE_MB')
    expect(r.stderr).toContain('"huge"')
  })
})

describe('README settings table', () => {
  it('documents every setting in SETTINGS', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('## Settings'))
    const rows = new Set([...section.matchAll(/^\| `(FLOE_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!))
    const missing = Object.keys(SETTINGS).filter((k) => !rows.has(k))
    expect(missing).toEqual([])
    const unknown = [...rows].filter((k) => !(k in SETTINGS))
    expect(unknown).toEqual([])
  })
})
