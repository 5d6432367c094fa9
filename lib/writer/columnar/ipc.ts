/**
 * A table as an Arrow IPC stream (what parquet-wasm reads), with the schema message encoded once
 * per Arrow schema instead of once per file. A compiled builder (arrow-build.ts) hands every
 * table the same Schema object, and apache-arrow's writer would otherwise re-encode that schema's
 * flatbuffer for each stream: a quarter of a one-row, 200-column file's encode CPU, paid ~1,200
 * times by an event fanned out to 1,200 files (docs/benchmarks.md, "Per-file cost").
 *
 * The stream is byte-for-byte what `tableToIPC(table, 'stream')` writes: the cached bytes are
 * that writer's own schema message, taken from the stream of an empty table of the schema (the
 * schema message followed by the 8-byte end-of-stream marker).
 */
import * as arrow from 'apache-arrow'

/** The end-of-stream marker closing every IPC stream: continuation (0xFFFFFFFF) and a zero length. */
const EOS_BYTES = 8

const schemaMessages = new WeakMap<arrow.Schema, Uint8Array>()

/** The encoded schema message of `schema` (continuation, length, flatbuffer, padding). */
function schemaMessage(schema: arrow.Schema): Uint8Array {
  let bytes = schemaMessages.get(schema)
  if (bytes === undefined) {
    const empty = arrow.RecordBatchStreamWriter.writeAll(new arrow.Table(schema)).toUint8Array(true)
    bytes = empty.slice(0, empty.length - EOS_BYTES)
    schemaMessages.set(schema, bytes)
  }
  return bytes
}

/** apache-arrow's stream writer, writing the schema message from the cache. */
class CachedSchemaWriter<T extends arrow.TypeMap> extends arrow.RecordBatchStreamWriter<T> {
  protected override _writeSchema(schema: arrow.Schema<T>): this {
    // oxlint-disable-next-line no-underscore-dangle -- apache-arrow's protected writer API (pinned; ipc.test.ts checks the bytes)
    return this._write(schemaMessage(schema))
  }
}

/** `tableToIPC(table, 'stream')`, the schema message encoded once per Schema object. */
export function tableToStream(table: arrow.Table): Uint8Array {
  return new CachedSchemaWriter().writeAll(table).toUint8Array(true)
}
