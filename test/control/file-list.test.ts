/**
 * A pending-batch item's size is what decides whether its file list spills to S3 and whether a
 * registration fits DynamoDB's 4 MB transaction: lib/control sizes the list as the JSON string
 * the item carries without building that string, so the count must be exact.
 */
import { describe, expect, it } from 'vitest'
import { filesJson, filesJsonStringBytes, jsonStringBytes, type EncodedFile } from '../../lib/control/file-list.js'
import { encodeDataFile } from '../../lib/iceberg/datafile-json.js'

const viaStringify = (s: string) => Buffer.byteLength(JSON.stringify(s))

/** A small deterministic generator (mulberry32), so a failure names a reproducible string. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('jsonStringBytes', () => {
  it('counts what JSON.stringify writes for escapes, control characters, multi-byte text and surrogates', () => {
    const cases = ['', 'plain', '"quoted"', 'back\\slash', 'tab\tnew\nline\r\b\f', '\u0000\u0001\u001f\u007f', 'é ü ß', '€ 中文', '😀 pair', '\ud83d lone high', 'lone low \ude00', '\ude00\ud83d reversed', 'end high \ud83d', '\u2028\u2029']
    for (const s of cases) expect(jsonStringBytes(s), JSON.stringify(s)).toBe(viaStringify(s))
  })

  it('matches JSON.stringify on random UTF-16 strings', () => {
    const next = random(20)
    // Weighted towards the edges: ASCII specials, control characters, surrogate halves.
    const pick = () => {
      const r = next()
      if (r < 0.3) return 0x20 + Math.floor(next() * 0x60)
      if (r < 0.4) return Math.floor(next() * 0x20)
      if (r < 0.5) return [0x22, 0x5c][Math.floor(next() * 2)]!
      if (r < 0.7) return 0xd800 + Math.floor(next() * 0x800)
      return Math.floor(next() * 0x10000)
    }
    for (let k = 0; k < 2_000; k++) {
      const s = String.fromCharCode(...Array.from({ length: Math.floor(next() * 40) }, pick))
      expect(jsonStringBytes(s), JSON.stringify(s)).toBe(viaStringify(s))
    }
  })
})

describe('filesJsonStringBytes', () => {
  const file = (i: number): EncodedFile =>
    encodeDataFile({
      content: 0,
      filePath: `s3://b/t/data/f"${i}".parquet`,
      fileFormat: 'PARQUET',
      specId: 0,
      partition: [`é-${i}`],
      recordCount: i + 1,
      fileSizeInBytes: 1000 + i,
      lowerBounds: new Map([[1, new TextEncoder().encode(`lower ${i}`)]]),
      upperBounds: new Map([[1, new TextEncoder().encode(`upper ${i}`)]]),
      valueCounts: new Map([[1, i + 1]]),
    })

  it('is the size of the list as the item carries it, for no, one and many files', () => {
    for (const n of [0, 1, 2, 24]) {
      const files = Array.from({ length: n }, (_, i) => file(i))
      expect(filesJsonStringBytes(files)).toBe(viaStringify(filesJson(files)))
    }
  })
})
