/**
 * Counts requests per DynamoDB partition key and per S3 prefix, with SDK middleware on clients of
 * their own (so other tests' clients are untouched). For the scale model (docs/scale.md): which
 * key carries how many requests and capacity units per second.
 *
 * Capacity is computed from item sizes by DynamoDB's published sizing rules (attribute names +
 * values; writes 1 WCU per started KB, transactional writes twice that; consistent reads 1 RCU per
 * started 4 KB, eventually consistent half), per key; DynamoDB Local's own ConsumedCapacity totals
 * are kept beside them as a check. The pending index has projection ALL: every pending-batch put
 * also writes its size to the index key `gsi1pk`.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb'
import { createClients, type AwsClients } from '../../lib/clients.js'
import { testAws } from './aws.js'

export interface KeyStats {
  requests: number
  wcu: number
  rcu: number
  /** Requests (DynamoDB: capacity units) per whole second since the counter started. */
  perSecond: Map<number, { requests: number; wcu: number; rcu: number }>
}

export interface ConsumedTotals {
  wcu: number
  rcu: number
}

export class RequestCounter {
  readonly ddbKeys = new Map<string, KeyStats>()
  readonly s3Prefixes = new Map<string, KeyStats & { put: number; get: number }>()
  readonly operations = new Map<string, number>()
  readonly consumed: ConsumedTotals = { wcu: 0, rcu: 0 }
  /** Bytes of items written (Put / Update values) and of S3 bodies put. */
  itemBytesWritten = 0
  s3BytesWritten = 0
  /** Size of every item put, by `pk|sk` (a delete costs the size of the item it removes). */
  readonly sizes = new Map<string, { size: number; gsi?: string }>()
  /** Deletes whose cost is settled once every process's puts are known (settle()). */
  readonly deletes: { pk: string; sk: string; sec: number; factor: number }[] = []
  /** Epoch ms the per-second buckets count from (shared across processes for one load test). */
  constructor(readonly started = Date.now()) {}

  second(): number {
    return Math.floor((Date.now() - this.started) / 1000)
  }

  addDdb(key: string, requests: number, wcu: number, rcu: number): void {
    this.addDdbAt(key, this.second(), requests, wcu, rcu)
  }

  addDdbAt(key: string, sec: number, requests: number, wcu: number, rcu: number): void {
    const s = this.ddbKeys.get(key) ?? { requests: 0, wcu: 0, rcu: 0, perSecond: new Map() }
    s.requests += requests
    s.wcu += wcu
    s.rcu += rcu
    const b = s.perSecond.get(sec) ?? { requests: 0, wcu: 0, rcu: 0 }
    b.requests += requests
    b.wcu += wcu
    b.rcu += rcu
    s.perSecond.set(sec, b)
    this.ddbKeys.set(key, s)
  }

  addS3(prefix: string, op: 'put' | 'get' | 'other'): void {
    const s = this.s3Prefixes.get(prefix) ?? { requests: 0, wcu: 0, rcu: 0, put: 0, get: 0, perSecond: new Map() }
    s.requests++
    if (op === 'put') s.put++
    if (op === 'get') s.get++
    const sec = this.second()
    const b = s.perSecond.get(sec) ?? { requests: 0, wcu: 0, rcu: 0 }
    b.requests++
    s.perSecond.set(sec, b)
    this.s3Prefixes.set(prefix, s)
  }

  /** Charge the recorded deletes: item size on the key, and on the index key for pending items. */
  settle(): void {
    for (const d of this.deletes.splice(0)) {
      const known = this.sizes.get(`${d.pk}|${d.sk}`)
      const kb = Math.max(1, Math.ceil((known?.size ?? 1) / 1024))
      this.addDdbAt(d.pk, d.sec, 0, d.factor * kb, 0)
      if (known?.gsi) this.addDdbAt(`pending:${known.gsi}`, d.sec, 1, kb, 0)
    }
  }

  op(name: string): void {
    this.operations.set(name, (this.operations.get(name) ?? 0) + 1)
  }

  /** DynamoDB keys whose name starts with `prefix`, sorted by total write units, largest first. */
  keys(prefix: string): [string, KeyStats][] {
    return [...this.ddbKeys].filter(([k]) => k.startsWith(prefix)).sort((a, b) => b[1].wcu + b[1].rcu - (a[1].wcu + a[1].rcu))
  }

  totals(prefix = ''): { requests: number; wcu: number; rcu: number } {
    const t = { requests: 0, wcu: 0, rcu: 0 }
    for (const [, s] of this.keys(prefix)) {
      t.requests += s.requests
      t.wcu += s.wcu
      t.rcu += s.rcu
    }
    return t
  }
}

/** Clients on the test endpoints whose every request is counted into `counter`. */
export function countedClients(counter: RequestCounter, endpoints?: { s3: string; dynamodb: string }): AwsClients {
  const clients = createClients({ endpoints: endpoints ?? testAws().endpoints, maxAttempts: 3 })
  clients.ddb.middlewareStack.add(
    (next) => async (args) => {
      ;(args.input as Record<string, unknown>).ReturnConsumedCapacity ??= 'TOTAL'
      return next(args)
    },
    { step: 'serialize', priority: 'high', name: 'floeConsumedCapacity' },
  )
  // At the build step the request body is the wire JSON: items in AttributeValue form.
  clients.ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const body = (args.request as { body?: unknown }).body
      const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : body == null ? '{}' : String(body as string)
      const input = JSON.parse(text) as Record<string, unknown>
      const out = await next(args)
      countDdb(counter, context.commandName ?? 'unknown', input, out.output as unknown as Record<string, unknown>)
      return out
    },
    { step: 'build', priority: 'low', name: 'floeRequestCounter' },
  )
  clients.s3.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; Prefix?: string; Body?: unknown }
      const name = context.commandName ?? 'unknown'
      counter.op(`s3.${name}`)
      const key = input.Key ?? input.Prefix ?? ''
      const op = name === 'PutObjectCommand' || name === 'UploadPartCommand' ? 'put' : name === 'GetObjectCommand' || name === 'HeadObjectCommand' ? 'get' : 'other'
      counter.addS3(s3Prefix(key), op)
      if (op === 'put') counter.s3BytesWritten += bodyLength(input.Body)
      return next(args)
    },
    { step: 'serialize', priority: 'high', name: 'floeRequestCounter' },
  )
  return clients
}

/** The "prefix" S3 scales by, modelled as the key's folder (everything before the last '/'). */
export function s3Prefix(key: string): string {
  const i = key.lastIndexOf('/')
  return i < 0 ? '' : key.slice(0, i + 1)
}

function bodyLength(body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body)
  if (body instanceof Uint8Array) return body.byteLength
  return 0
}

type Item = Record<string, AttributeValue>

function countDdb(counter: RequestCounter, command: string, input: Record<string, unknown>, output: Record<string, unknown> | undefined): void {
  counter.op(`ddb.${command}`)
  for (const c of ([] as { CapacityUnits?: number; WriteCapacityUnits?: number; ReadCapacityUnits?: number }[]).concat(
    (output?.ConsumedCapacity as never) ?? [],
  )) {
    if (c.WriteCapacityUnits !== undefined || c.ReadCapacityUnits !== undefined) {
      counter.consumed.wcu += c.WriteCapacityUnits ?? 0
      counter.consumed.rcu += c.ReadCapacityUnits ?? 0
    } else if (command.startsWith('Put') || command.startsWith('Update') || command.startsWith('Delete') || command.startsWith('Transact') || command.startsWith('BatchWrite')) {
      counter.consumed.wcu += c.CapacityUnits ?? 0
    } else counter.consumed.rcu += c.CapacityUnits ?? 0
  }
  switch (command) {
    case 'TransactWriteItemsCommand':
      for (const t of input.TransactItems as Record<string, Record<string, unknown>>[]) {
        if (t.Put) write(counter, t.Put.Item as Item, 2)
        else if (t.Update) write(counter, t.Update.Key as Item, 2, updateBytes(t.Update))
        else if (t.Delete) del(counter, t.Delete.Key as Item, 2)
        else if (t.ConditionCheck) counter.addDdb(pkOf(t.ConditionCheck.Key as Item), 1, 0, 2 * 1)
      }
      return
    case 'PutItemCommand':
      return write(counter, input.Item as Item, 1)
    case 'UpdateItemCommand':
      return write(counter, input.Key as Item, 1, updateBytes(input))
    case 'DeleteItemCommand':
      return del(counter, input.Key as Item, 1)
    case 'GetItemCommand': {
      const item = output?.Item as Item | undefined
      return counter.addDdb(pkOf(input.Key as Item), 1, 0, readUnits(item ? itemSize(item) : 1, input.ConsistentRead === true))
    }
    case 'BatchGetItemCommand': {
      const responses = Object.values((output?.Responses ?? {}) as Record<string, Item[]>).flat()
      for (const [, req] of Object.entries(input.RequestItems as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>)) {
        for (const k of req.Keys) {
          const pk = pkOf(k)
          const hit = responses.find((r) => pkOf(r) === pk && (r.sk?.S ?? '') === (k.sk?.S ?? ''))
          counter.addDdb(pk, 1, 0, readUnits(hit ? itemSize(hit) : 1, req.ConsistentRead === true))
        }
      }
      return
    }
    case 'QueryCommand': {
      const values = input.ExpressionAttributeValues as Item
      const pkValue = values[':pk']?.S ?? values[':identifier']?.S ?? '?'
      const key = input.IndexName ? `${input.IndexName}:${pkValue}` : pkValue
      // Capacity of a Query is the size of the items it read (not what it returned), summed, per 4 KB.
      const units = (output?.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits
      const items = (output?.Items as Item[] | undefined) ?? []
      const size = items.reduce((n, i) => n + itemSize(i), 0)
      counter.addDdb(key, 1, 0, units ?? readUnits(Math.max(1, size), input.ConsistentRead === true))
      return
    }
    default:
      if (command === 'ScanCommand') counter.addDdb('(scan)', 1, 0, 0)
  }
}

function write(counter: RequestCounter, item: Item, factor: number, size = itemSize(item)): void {
  const pk = pkOf(item)
  const wcu = factor * Math.max(1, Math.ceil(size / 1024))
  counter.itemBytesWritten += size
  counter.addDdb(pk, 1, wcu, 0)
  if (item.sk?.S !== undefined) counter.sizes.set(`${pk}|${item.sk.S}`, { size, gsi: item.gsi1pk?.S })
  // The pending index (projection ALL) takes a write of the whole item, outside the transaction.
  if (item.gsi1pk?.S) counter.addDdb(`pending:${item.gsi1pk.S}`, 1, Math.max(1, Math.ceil(size / 1024)), 0)
}

function del(counter: RequestCounter, key: Item, factor: number): void {
  counter.addDdb(pkOf(key), 1, 0, 0)
  counter.deletes.push({ pk: pkOf(key), sk: key.sk?.S ?? '', sec: counter.second(), factor })
}

function updateBytes(update: Record<string, unknown>): number {
  const values = (update.ExpressionAttributeValues ?? {}) as Item
  return itemSize(update.Key as Item) + Object.values(values).reduce((n, v) => n + valueSize(v), 0) + 40
}

function readUnits(bytes: number, consistent: boolean): number {
  const units = Math.ceil(bytes / 4096)
  return consistent ? units : units / 2
}

/** The partition key: `pk` in the control table, `identifier` in the DynamoDbCatalog layout. */
function pkOf(item: Item): string {
  return item.pk?.S ?? item.identifier?.S ?? '?'
}

/** DynamoDB's item size: attribute names plus values (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html). */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + valueSize(v), 0)
}

function valueSize(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S)
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\./g, '').length / 2) + 1
  if (v.B !== undefined) return typeof (v.B as unknown) === 'string' ? Math.floor(((v.B as unknown as string).length * 3) / 4) : v.B.byteLength
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1
  if (v.M !== undefined) return 3 + itemSize(v.M) + Object.keys(v.M).length
  if (v.L !== undefined) return 3 + v.L.reduce((n, x) => n + 1 + valueSize(x), 0)
  if (v.SS !== undefined) return v.SS.reduce((n, s) => n + Buffer.byteLength(s), 0)
  if (v.NS !== undefined) return v.NS.reduce((n, s) => n + Math.ceil(s.length / 2) + 1, 0)
  return 0
}

export interface CounterDump {
  ddb: [string, { requests: number; wcu: number; rcu: number; perSecond: [number, { requests: number; wcu: number; rcu: number }][] }][]
  s3: [string, { requests: number; put: number; get: number; perSecond: [number, { requests: number }][] }][]
  operations: [string, number][]
  consumed: ConsumedTotals
  itemBytesWritten: number
  s3BytesWritten: number
  sizes: [string, { size: number; gsi?: string }][]
  deletes: { pk: string; sk: string; sec: number; factor: number }[]
}

/** JSON-able form, to send a child process's counts to its parent. */
export function dumpCounter(c: RequestCounter): CounterDump {
  return {
    ddb: [...c.ddbKeys].map(([k, s]) => [k, { requests: s.requests, wcu: s.wcu, rcu: s.rcu, perSecond: [...s.perSecond] }]),
    s3: [...c.s3Prefixes].map(([k, s]) => [k, { requests: s.requests, put: s.put, get: s.get, perSecond: [...s.perSecond] }]),
    operations: [...c.operations],
    consumed: c.consumed,
    itemBytesWritten: c.itemBytesWritten,
    s3BytesWritten: c.s3BytesWritten,
    sizes: [...c.sizes],
    deletes: c.deletes,
  }
}

/** Adds a dump into `into` (per-second buckets summed across processes). */
export function mergeCounter(into: RequestCounter, d: CounterDump): void {
  for (const [k, s] of d.ddb) {
    const t = into.ddbKeys.get(k) ?? { requests: 0, wcu: 0, rcu: 0, perSecond: new Map() }
    t.requests += s.requests
    t.wcu += s.wcu
    t.rcu += s.rcu
    for (const [sec, b] of s.perSecond) {
      const x = t.perSecond.get(sec) ?? { requests: 0, wcu: 0, rcu: 0 }
      x.requests += b.requests
      x.wcu += b.wcu
      x.rcu += b.rcu
      t.perSecond.set(sec, x)
    }
    into.ddbKeys.set(k, t)
  }
  for (const [k, s] of d.s3) {
    const t = into.s3Prefixes.get(k) ?? { requests: 0, wcu: 0, rcu: 0, put: 0, get: 0, perSecond: new Map() }
    t.requests += s.requests
    t.put += s.put
    t.get += s.get
    for (const [sec, b] of s.perSecond) {
      const x = t.perSecond.get(sec) ?? { requests: 0, wcu: 0, rcu: 0 }
      x.requests += b.requests
      t.perSecond.set(sec, x)
    }
    into.s3Prefixes.set(k, t)
  }
  for (const [k, n] of d.operations) into.operations.set(k, (into.operations.get(k) ?? 0) + n)
  into.consumed.wcu += d.consumed.wcu
  into.consumed.rcu += d.consumed.rcu
  into.itemBytesWritten += d.itemBytesWritten
  into.s3BytesWritten += d.s3BytesWritten
  for (const [k, v] of d.sizes) into.sizes.set(k, v)
  into.deletes.push(...d.deletes)
}
