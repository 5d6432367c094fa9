/**
 * A FileIO wrapper that counts calls by the S3 request each would be (write → PUT, read → GET,
 * stat/exists → HEAD, list → LIST, delete → DELETE). The writer bench uses a file:// warehouse
 * (so disk speed, not s3rver, is what it measures) and still needs S3 request counts for the
 * cost model.
 */
import type { FileIO } from '../../lib/io/types.js'

export interface IoCounts {
  PUT: number
  GET: number
  HEAD: number
  LIST: number
  DELETE: number
  bytesWritten: number
}

export const emptyIoCounts = (): IoCounts => ({ PUT: 0, GET: 0, HEAD: 0, LIST: 0, DELETE: 0, bytesWritten: 0 })

export function countingIO(io: FileIO, counts: IoCounts): FileIO {
  return {
    read: (p) => (counts.GET++, io.read(p)),
    readRange: (p, start, end) => (counts.GET++, io.readRange(p, start, end)),
    openWrite: (p, o) => (counts.PUT++, io.openWrite(p, o)),
    write: (p, data, o) => {
      counts.PUT++
      counts.bytesWritten += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength
      return io.write(p, data, o)
    },
    exists: (p) => (counts.HEAD++, io.exists(p)),
    stat: (p) => (counts.HEAD++, io.stat(p)),
    delete: (p) => (counts.DELETE++, io.delete(p)),
    deleteMany: (ps) => ((counts.DELETE += Math.ceil(ps.length / 1000)), io.deleteMany(ps)),
    list: (prefix) => (counts.LIST++, io.list(prefix)),
  }
}
