/**
 * Floe's REST endpoint (lib/catalog/rest-server over the DynamoDB catalog) judged by PyIceberg's
 * REST catalog: PyIceberg reads a table Floe wrote, appends to it, and creates and fills a table of
 * its own, all through the endpoint; Spark's REST catalog appends through it too; Floe's REST
 * client reads what they wrote (every id, from the data files its load names), Floe's committer appends after PyIceberg, and Spark's
 * DynamoDbCatalog sees the same table.
 */
import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenRest, noAuth, RestCatalog, type ServingRest } from '../../lib/catalog/index.js'
import type { LoadedTable } from '../../lib/catalog/types.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import type { FileIO } from '../../lib/io/types.js'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { skipReason, startEngines, type Engines } from './engine.js'
import { commitExactly, startFloe, type Floe } from './floe.js'

const here = dirname(fileURLToPath(import.meta.url))
const events = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ topic: 'events', partition: 0, offset: from + i, value: { id: from + i, name: `f${from + i}` } }))

/**
 * Runs a Python script and returns its last stdout line as JSON. Asynchronous on purpose: Floe's
 * endpoint is served from this process, so a synchronous spawn would block the event loop that
 * has to answer the script's requests.
 */
function python(script: string, arg: unknown, timeout: number, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.env.FLOE_INTEROP_PYTHON!,
      [join(here, script), JSON.stringify(arg)],
      { encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED', AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED', ...env } },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${script} ${JSON.stringify(arg).slice(0, 200)} failed (${err.code ?? err.signal}): ${stderr.slice(-4000)}`))
        else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>)
      },
    )
  })
}

/** The ids in a table as Floe's client loaded it: every live data file read (hyparquet), sorted. */
async function idsOf(io: FileIO, loaded: LoadedTable): Promise<number[]> {
  const ids: number[] = []
  for (const e of await liveDataFiles(io, loaded.metadata)) {
    const bytes = await io.read(e.dataFile.filePath)
    const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, columns: ['id'], compressors })) as { id: bigint | number }[]
    for (const r of rows) ids.push(Number(r.id))
  }
  return ids.sort((a, b) => a - b)
}

const pyiceberg = (uri: string, op: string, table: string, ids?: number[]) => python('rest_pyiceberg.py', { uri, op, table, ids }, 180_000)

describe.skipIf(skipReason)("PyIceberg's REST catalog through Floe's endpoint", () => {
  let floe: Floe
  let serving: ServingRest
  let engines: Engines
  const floeRest = () => new RestCatalog({ uri: serving.uri, auth: noAuth, timeoutMs: 30_000 })

  beforeAll(async () => {
    floe = await startFloe({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }] }) })
    await floe.write(events(0, 5))
    await commitExactly(floe, 5)
    serving = await listenRest(floe.catalog)
    engines = startEngines({ catalogTable: floe.deps.config.catalogTable, warehouse: floe.warehouse })
  })
  afterAll(async () => {
    await serving?.close()
    await engines?.close()
  })

  it('reads what Floe wrote, appends to it; Floe commits after it; Spark (DynamoDbCatalog) and Floe read every row once', async () => {
    expect(await pyiceberg(serving.uri, 'scan', 'db.events')).toMatchObject({ ids: [0, 1, 2, 3, 4], snapshots: 1 })
    await pyiceberg(serving.uri, 'append', 'db.events', [100, 101])
    await floe.write(events(5, 2))
    await commitExactly(floe, 2)
    const want = [0, 1, 2, 3, 4, 5, 6, 100, 101]
    expect(await pyiceberg(serving.uri, 'scan', 'db.events')).toMatchObject({ ids: want, snapshots: 3 })
    const spark = await engines.spark('SELECT id FROM floe.db.events ORDER BY id')
    expect(spark.rows.map((r) => Number(r.id))).toEqual(want)
    expect(await idsOf(floe.io, await floeRest().loadTable({ namespace: 'db', name: 'events' }))).toEqual(want)
  })

  it("Spark's REST catalog appends through the endpoint and reads every row; Floe's client reads what it wrote", async () => {
    const spark = await python('rest_spark.py', { uri: serving.uri, table: 'db.events', insert: [200, 201] }, 400_000, { SPARK_LOCAL_IP: '127.0.0.1', PYSPARK_SUBMIT_ARGS: '--conf spark.ui.enabled=false pyspark-shell' })
    const want = [0, 1, 2, 3, 4, 5, 6, 100, 101, 200, 201]
    expect(spark.ids).toEqual(want)
    expect(await idsOf(floe.io, await floeRest().loadTable({ namespace: 'db', name: 'events' }))).toEqual(want)
    expect(await pyiceberg(serving.uri, 'scan', 'db.events')).toMatchObject({ ids: want })
  })

  it('a table PyIceberg creates and fills through the endpoint is a DynamoDB catalog row that Floe reads and appends to', async () => {
    const made = await pyiceberg(serving.uri, 'create_append', 'db.py_made', [1, 2, 3])
    expect(made.location).toBe(`${floe.warehouse}/db.db/py_made`)
    const viaRest = await floeRest().loadTable({ namespace: 'db', name: 'py_made' })
    const viaDdb = await floe.catalog.loadTable({ namespace: 'db', name: 'py_made' })
    expect(viaRest.metadataLocation).toBe(viaDdb.metadataLocation)
    expect(await idsOf(floe.io, viaRest)).toEqual([1, 2, 3])
    const spark = await engines.spark('SELECT id, name FROM floe.db.py_made ORDER BY id')
    expect(spark.rows).toEqual([{ id: 1, name: 'py1' }, { id: 2, name: 'py2' }, { id: 3, name: 'py3' }])
  })
})
