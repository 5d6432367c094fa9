/**
 * The Parquet-encode worker thread (lib/writer/workers/pool.ts): Arrow IPC stream bytes in,
 * Parquet bytes out, both as transferred ArrayBuffers — nothing per record crosses the thread
 * boundary. Its writer settings are plain values computed on the main thread
 * (columnar/parquet.ts `parquetSettings`), applied here exactly as parquet.ts `writeWithSettings` applies them.
 *
 * Plain CommonJS on purpose: the same file runs unbundled (tests, tsx, `npm start`: parquet-wasm
 * resolves from node_modules) and bundled by esbuild beside the Lambda handler as
 * `encode-worker.cjs` (infra/constructs/floe-function.ts), where parquet-wasm's Node build finds
 * its `.wasm` through `__dirname`, which CommonJS has without a banner.
 */
'use strict'
const { parentPort } = require('node:worker_threads')
const { Encoding, Table, writeParquet, WriterPropertiesBuilder } = require('parquet-wasm/node')

/** One job: `{ id, ipc: Uint8Array, settings: { compression, createdBy, dictionary: string[], delta: string[], rowGroupSize?, rowGroupBytes? } }`. */
function encode(ipc, s) {
  let builder = new WriterPropertiesBuilder().setCompression(s.compression).setCreatedBy(s.createdBy).setDictionaryEnabled(false)
  for (const name of s.dictionary) builder = builder.setColumnDictionaryEnabled(name, true)
  for (const name of s.delta) builder = builder.setColumnEncoding(name, Encoding.DELTA_BINARY_PACKED)
  if (s.rowGroupSize !== undefined) builder = builder.setMaxRowGroupSize(s.rowGroupSize)
  if (s.rowGroupBytes !== undefined) builder = builder.setMaxRowGroupBytes(s.rowGroupBytes)
  // writeParquet takes ownership of (and frees) both wasm objects.
  return writeParquet(Table.fromIPCStream(ipc), builder.build())
}

parentPort.on('message', (job) => {
  let bytes
  try {
    bytes = encode(job.ipc, job.settings)
  } catch (err) {
    parentPort.postMessage({ id: job.id, error: String((err && err.message) || err) })
    return
  }
  parentPort.postMessage({ id: job.id, bytes }, [bytes.buffer])
})
