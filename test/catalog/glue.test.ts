/**
 * Glue catalog. AWS Glue has no local server (DynamoDB Local and s3rver have no Glue
 * counterpart), so these tests mock ONLY the Glue client with aws-sdk-client-mock and assert the
 * exact requests Iceberg Java's GlueTableOperations would send. Metadata files go to a real
 * file:// warehouse. The live test at the end talks to real Glue when it can.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  ConcurrentModificationException,
  CreateDatabaseCommand,
  CreateTableCommand,
  DeleteTableCommand,
  EntityNotFoundException,
  GetDatabaseCommand,
  GetDatabasesCommand,
  GetTableCommand,
  GetTablesCommand,
  GlueClient,
  InternalServiceException,
  AlreadyExistsException as GlueAlreadyExists,
  type Table,
  UpdateTableCommand,
} from '@aws-sdk/client-glue'
import { mockClient } from 'aws-sdk-client-mock'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { createClients } from '../../lib/clients.js'
import { GlueCatalog } from '../../lib/catalog/glue.js'
import { glueColumns, glueTypeString } from '../../lib/catalog/glue-columns.js'
import { AlreadyExistsError, CommitConflictError, CommitStateUnknownError, NoSuchTableError } from '../../lib/errors.js'
import { newTableMetadata } from '../../lib/iceberg/metadata.js'
import { readTableMetadata, writeTableMetadata } from '../../lib/iceberg/metadata-io.js'
import type { TableMetadata } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import type { Schema } from '../../lib/schema/types.js'
import { liveGlueDatabase, testAws } from '../helpers/aws.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz', doc: 'event time' },
    { id: 3, name: 'amount', required: false, type: 'decimal(9, 2)' },
    {
      id: 4,
      name: 'payload',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 5, name: 'tags', required: false, type: { type: 'list', 'element-id': 6, element: 'string', 'element-required': false } },
          { id: 7, name: 'attrs', required: false, type: { type: 'map', 'key-id': 8, key: 'string', 'value-id': 9, value: 'int', 'value-required': false } },
        ],
      },
    },
  ],
}

const dir = mkdtempSync(join(tmpdir(), 'floe-glue-'))
const warehouse = pathToFileURL(dir).href
const io = createFileIO(testAws().clients)
const client = new GlueClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } })
const glue = mockClient(client)
const catalog = new GlueCatalog({ glue: client, catalogId: '123456789012', warehouse, io })

afterAll(() => rmSync(dir, { recursive: true, force: true }))
beforeEach(() => glue.reset())

const notFound = () => new EntityNotFoundException({ message: 'Entity Not Found', $metadata: { httpStatusCode: 400, attempts: 1 } })

async function existingTable(name: string, extra: Partial<Table> = {}): Promise<{ table: Table; metadata: TableMetadata; path: string }> {
  const metadata = newTableMetadata({ location: `${warehouse}/db.db/${name}`, schema })
  const path = `${metadata.location}/metadata/00000-0a0b0c0d-0000-4000-8000-000000000000.metadata.json`
  await writeTableMetadata(io, path, metadata)
  const table: Table = {
    Name: name,
    DatabaseName: 'db',
    VersionId: '7',
    TableType: 'EXTERNAL_TABLE',
    Parameters: { table_type: 'ICEBERG', metadata_location: path, EXTERNAL: 'TRUE' },
    StorageDescriptor: { Location: metadata.location, Columns: [{ Name: 'id', Type: 'bigint', Comment: 'set in the Glue console' }] },
    ...extra,
  }
  return { table, metadata, path }
}

async function exists(path: string) {
  return io.exists(path)
}

describe('Glue type names and columns (IcebergToGlueConverter)', () => {
  it('maps Iceberg types to Hive type strings as Java does', () => {
    expect(['boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz', 'string', 'uuid', 'binary', 'fixed[16]', 'decimal(38, 10)', 'timestamp_ns'].map(glueTypeString)).toEqual(
      ['boolean', 'int', 'bigint', 'float', 'double', 'date', 'string', 'timestamp', 'timestamp', 'string', 'string', 'binary', 'binary', 'decimal(38,10)', 'timestamp_nano'],
    )
    expect(glueTypeString(schema.fields[3]!.type)).toBe('struct<tags:array<string>,attrs:map<string,int>>')
  })

  it('lists current columns first, then columns only older schemas had, with iceberg.field.* parameters', () => {
    const md = newTableMetadata({ location: 'file:///t', schema: { ...schema, 'schema-id': 0 } })
    const v1: Schema = { ...schema, 'schema-id': 1, fields: [schema.fields[0]!, { id: 10, name: 'extra', required: false, type: 'string' }] }
    const evolved: TableMetadata = { ...md, schemas: [md.schemas[0]!, v1], 'current-schema-id': 1 }
    expect(glueColumns(evolved)).toEqual([
      { Name: 'id', Type: 'bigint', Parameters: { 'iceberg.field.id': '1', 'iceberg.field.optional': 'false', 'iceberg.field.current': 'true' } },
      { Name: 'extra', Type: 'string', Parameters: { 'iceberg.field.id': '10', 'iceberg.field.optional': 'true', 'iceberg.field.current': 'true' } },
      { Name: 'ts', Type: 'timestamp', Comment: 'event time', Parameters: { 'iceberg.field.id': '2', 'iceberg.field.optional': 'true', 'iceberg.field.current': 'false' } },
      { Name: 'amount', Type: 'decimal(9,2)', Parameters: { 'iceberg.field.id': '3', 'iceberg.field.optional': 'true', 'iceberg.field.current': 'false' } },
      {
        Name: 'payload',
        Type: 'struct<tags:array<string>,attrs:map<string,int>>',
        Parameters: { 'iceberg.field.id': '4', 'iceberg.field.optional': 'true', 'iceberg.field.current': 'false' },
      },
    ])
  })
})

describe('namespaces', () => {
  it('creates a Glue database, taking comment and location out of the parameters', async () => {
    glue.on(CreateDatabaseCommand).resolves({})
    await catalog.createNamespace('db', { comment: 'events', location: 's3://b/db', owner: 'floe' })
    expect(glue.commandCalls(CreateDatabaseCommand).map((c) => c.args[0].input)).toEqual([
      { CatalogId: '123456789012', DatabaseInput: { Name: 'db', Description: 'events', LocationUri: 's3://b/db', Parameters: { owner: 'floe' } } },
    ])
  })

  it('maps AlreadyExistsException to AlreadyExistsError and rejects names Glue would refuse', async () => {
    glue.on(CreateDatabaseCommand).rejects(new GlueAlreadyExists({ message: 'exists', $metadata: {} }))
    await expect(catalog.createNamespace('db')).rejects.toThrow(AlreadyExistsError)
    await expect(catalog.createNamespace('Bad-Name')).rejects.toThrow(/cannot use namespace 'Bad-Name' as a Glue database name/)
  })

  it('loads a database as namespace properties (comment and location back in), undefined when Glue has none', async () => {
    glue
      .on(GetDatabaseCommand)
      .resolvesOnce({ Database: { Name: 'db', Description: 'events', LocationUri: 's3://b/db', Parameters: { owner: 'floe' } } })
      .rejectsOnce(new EntityNotFoundException({ message: 'no such database', $metadata: {} }))
    expect(await catalog.loadNamespace('db')).toEqual({ owner: 'floe', comment: 'events', location: 's3://b/db' })
    expect(await catalog.loadNamespace('gone')).toBeUndefined()
  })

  it('lists databases and the Iceberg tables of one, following NextToken', async () => {
    glue.on(GetDatabasesCommand).resolves({ DatabaseList: [{ Name: 'a' }, { Name: 'b' }] })
    expect(await catalog.listNamespaces()).toEqual(['a', 'b'])
    glue
      .on(GetTablesCommand)
      .resolvesOnce({ TableList: [{ Name: 't1', DatabaseName: 'db', Parameters: { table_type: 'ICEBERG' } }, { Name: 'hive', DatabaseName: 'db', Parameters: {} }], NextToken: 'n1' })
      .resolvesOnce({ TableList: [{ Name: 't2', DatabaseName: 'db', Parameters: { table_type: 'iceberg' } }] })
    expect(await catalog.listTables('db')).toEqual([
      { namespace: 'db', name: 't1' },
      { namespace: 'db', name: 't2' },
    ])
    expect(glue.commandCalls(GetTablesCommand).map((c) => c.args[0].input)).toEqual([
      { CatalogId: '123456789012', DatabaseName: 'db' },
      { CatalogId: '123456789012', DatabaseName: 'db', NextToken: 'n1' },
    ])
  })
})

describe('tables', () => {
  it('creates an EXTERNAL_TABLE with table_type=ICEBERG, metadata_location and mirrored columns', async () => {
    glue.on(GetDatabaseCommand).resolves({ Database: { Name: 'db' } })
    glue.on(GetTableCommand).rejects(notFound())
    glue.on(CreateTableCommand).resolves({})
    const created = await catalog.createTable({ namespace: 'db', name: 'events' }, { schema, properties: { comment: 'click stream' } })
    expect(created.metadata.location).toBe(`${warehouse}/db.db/events`)
    expect(created.metadataLocation).toMatch(/\/db\.db\/events\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/)
    expect(await exists(created.metadataLocation)).toBe(true)
    expect(glue.commandCalls(GetDatabaseCommand)[0]!.args[0].input).toEqual({ CatalogId: '123456789012', Name: 'db' })
    expect(glue.commandCalls(CreateTableCommand).map((c) => c.args[0].input)).toEqual([
      {
        CatalogId: '123456789012',
        DatabaseName: 'db',
        TableInput: {
          Name: 'events',
          TableType: 'EXTERNAL_TABLE',
          Description: 'click stream',
          Parameters: { table_type: 'ICEBERG', metadata_location: created.metadataLocation },
          StorageDescriptor: { Location: created.metadata.location, Columns: glueColumns(created.metadata), AdditionalLocations: [] },
        },
      },
    ])
  })

  it('puts a table under the database LocationUri when it has one', async () => {
    glue.on(GetDatabaseCommand).resolves({ Database: { Name: 'db', LocationUri: `${warehouse}/dbloc/` } })
    glue.on(GetTableCommand).rejects(notFound())
    glue.on(CreateTableCommand).resolves({})
    const created = await catalog.createTable({ namespace: 'db', name: 'located' }, { schema })
    expect(created.metadata.location).toBe(`${warehouse}/dbloc/located`)
  })

  it('a create that loses the race to another creator is AlreadyExistsError and removes its metadata file', async () => {
    glue.on(GetDatabaseCommand).resolves({ Database: { Name: 'db' } })
    glue.on(GetTableCommand).rejects(notFound())
    glue.on(CreateTableCommand).rejects(new GlueAlreadyExists({ message: 'Table already exists.', $metadata: { httpStatusCode: 400, attempts: 1 } }))
    await expect(catalog.createTable({ namespace: 'db', name: 'raced' }, { schema })).rejects.toThrow(AlreadyExistsError)
    const written = glue.commandCalls(CreateTableCommand)[0]!.args[0].input.TableInput!.Parameters!.metadata_location!
    expect(await exists(written)).toBe(false)
  })

  it('a missing database is NoSuchTableError', async () => {
    glue.on(GetDatabaseCommand).rejects(notFound())
    await expect(catalog.createTable({ namespace: 'nodb', name: 't' }, { schema })).rejects.toThrow(/Glue database 'nodb' does not exist/)
  })

  it('loads the metadata file metadata_location names; a non-Iceberg or missing table is NoSuchTableError', async () => {
    const { table, path } = await existingTable('loaded')
    glue.on(GetTableCommand, { Name: 'loaded' }).resolves({ Table: table })
    glue.on(GetTableCommand, { Name: 'hive' }).resolves({ Table: { Name: 'hive', DatabaseName: 'db', Parameters: { table_type: 'HIVE' } } })
    glue.on(GetTableCommand, { Name: 'gone' }).rejects(notFound())
    const loaded = await catalog.loadTable({ namespace: 'db', name: 'loaded' })
    expect(loaded.metadataLocation).toBe(path)
    expect(loaded.metadata['table-uuid']).toBe((await readTableMetadata(io, path))['table-uuid'])
    await expect(catalog.loadTable({ namespace: 'db', name: 'hive' })).rejects.toThrow(/not an Iceberg table \(table_type=HIVE\)/)
    await expect(catalog.loadTable({ namespace: 'db', name: 'gone' })).rejects.toThrow(NoSuchTableError)
  })
})

describe('commits', () => {
  it('UpdateTable carries the VersionId read, the new and previous metadata locations, kept parameters and column comments', async () => {
    const { table, metadata, path } = await existingTable('committed')
    glue.on(GetTableCommand).resolves({ Table: table })
    glue.on(UpdateTableCommand).resolves({})
    const next = { ...metadata, properties: { ...metadata.properties, 'write.data.path': `${warehouse}/data` } }
    const res = await catalog.commit({ namespace: 'db', name: 'committed' }, { base: path, metadata: next, baseMetadata: metadata })
    expect(res.metadataLocation).toMatch(/\/metadata\/00001-[0-9a-f-]{36}\.metadata\.json$/)
    expect(glue.commandCalls(UpdateTableCommand).map((c) => c.args[0].input)).toEqual([
      {
        CatalogId: '123456789012',
        DatabaseName: 'db',
        SkipArchive: true,
        VersionId: '7',
        TableInput: {
          Name: 'committed',
          TableType: 'EXTERNAL_TABLE',
          Parameters: { EXTERNAL: 'TRUE', table_type: 'ICEBERG', metadata_location: res.metadataLocation, previous_metadata_location: path },
          StorageDescriptor: {
            Location: metadata.location,
            Columns: glueColumns(res.metadata, [{ Name: 'id', Comment: 'set in the Glue console' }]),
            AdditionalLocations: [`${warehouse}/data`],
          },
        },
      },
    ])
    const cols = glue.commandCalls(UpdateTableCommand)[0]!.args[0].input.TableInput!.StorageDescriptor!.Columns!
    expect(cols[0]).toMatchObject({ Name: 'id', Comment: 'set in the Glue console' })
    expect((await readTableMetadata(io, res.metadataLocation))['metadata-log'].map((e) => e['metadata-file'])).toEqual([path])
  })

  it('ConcurrentModificationException is a CommitConflictError and the new metadata file is deleted', async () => {
    const { table, metadata, path } = await existingTable('conflicted')
    glue.on(GetTableCommand).resolves({ Table: table })
    glue.on(UpdateTableCommand).rejects(new ConcurrentModificationException({ message: 'Update table failed due to concurrent modifications.', $metadata: { httpStatusCode: 400, attempts: 1 } }))
    const err = await catalog.commit({ namespace: 'db', name: 'conflicted' }, { base: path, metadata, baseMetadata: metadata }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CommitConflictError)
    expect((err as CommitConflictError).retryable).toBe(true)
    const attempted = glue.commandCalls(UpdateTableCommand)[0]!.args[0].input.TableInput!.Parameters!.metadata_location!
    expect(await exists(attempted)).toBe(false)
  })

  it('a stale base is a conflict before anything is written or sent', async () => {
    const { table, metadata } = await existingTable('stale')
    glue.on(GetTableCommand).resolves({ Table: table })
    await expect(catalog.commit({ namespace: 'db', name: 'stale' }, { base: 'file:///elsewhere/00000-x.metadata.json', metadata, baseMetadata: metadata })).rejects.toThrow(
      /is no longer current/,
    )
    expect(glue.commandCalls(UpdateTableCommand)).toHaveLength(0)
  })

  it('a retried UpdateTable whose outcome cannot be known is CommitStateUnknownError and keeps the file', async () => {
    const { table, metadata, path } = await existingTable('unknown')
    glue.on(GetTableCommand).resolves({ Table: table }) // the check still sees version 7
    glue.on(UpdateTableCommand).rejects(new InternalServiceException({ message: 'Internal error', $metadata: { httpStatusCode: 500, attempts: 3 } }))
    const err = await catalog.commit({ namespace: 'db', name: 'unknown' }, { base: path, metadata, baseMetadata: metadata }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CommitStateUnknownError)
    const attempted = glue.commandCalls(UpdateTableCommand)[0]!.args[0].input.TableInput!.Parameters!.metadata_location!
    expect(await exists(attempted)).toBe(true)
  })

  it('a failed UpdateTable that in fact landed (the check finds our file) is a success', async () => {
    const { table, metadata, path } = await existingTable('landed')
    glue.on(GetTableCommand).resolvesOnce({ Table: table })
    glue.on(UpdateTableCommand).callsFake((input: { TableInput: Table }) => {
      glue.on(GetTableCommand).resolves({ Table: { ...table, VersionId: '8', Parameters: input.TableInput.Parameters } })
      throw new InternalServiceException({ message: 'Internal error', $metadata: { httpStatusCode: 500, attempts: 2 } })
    })
    const res = await catalog.commit({ namespace: 'db', name: 'landed' }, { base: path, metadata, baseMetadata: metadata })
    expect(await exists(res.metadataLocation)).toBe(true)
  })
})

/** Runs only with real credentials and LIVE_GLUE_DATABASE (test/helpers/aws.ts liveGlueDatabase). */
const liveGlue = liveGlueDatabase()
const liveSkip = 'skip' in liveGlue ? liveGlue.skip : undefined
const liveDb = 'database' in liveGlue ? liveGlue.database : undefined

describe.skipIf(liveSkip !== undefined)(`live Glue${liveSkip ? ` (skipped: ${liveSkip})` : ''}`, () => {
  it('creates, loads and commits a table in real Glue, then drops it', async () => {
    const clients = createClients({ env: {} }) // real endpoints, whatever the test setup exported
    const liveIo = createFileIO(clients)
    const db = (await clients.glue().send(new GetDatabaseCommand({ Name: liveDb! }))).Database!
    const live = new GlueCatalog({ glue: clients.glue(), warehouse: process.env.FLOE_WAREHOUSE ?? db.LocationUri ?? '', io: liveIo })
    const id = { namespace: liveDb!, name: `floe_live_${Date.now()}` }
    try {
      const created = await live.createTable(id, { schema })
      const loaded = await live.loadTable(id)
      expect(loaded.metadataLocation).toBe(created.metadataLocation)
      const next = { ...loaded.metadata, properties: { ...loaded.metadata.properties, 'floe.live': 'true' } }
      const res = await live.commit(id, { base: loaded.metadataLocation, metadata: next, baseMetadata: loaded.metadata })
      const again = await live.loadTable(id)
      expect(again.metadataLocation).toBe(res.metadataLocation)
      await expect(live.commit(id, { base: loaded.metadataLocation, metadata: next })).rejects.toThrow(CommitConflictError)
    } finally {
      await clients.glue().send(new DeleteTableCommand({ DatabaseName: id.namespace, Name: id.name })).catch(() => undefined)
    }
  }, 120_000)
})
