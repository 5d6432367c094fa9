import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeBase64, isBase64 } from '../../lib/kafka/base64.js'
import { parseKafkaEvent, readKafkaEvent } from '../../lib/kafka/event-parts.js'
import { RawRecordReader } from '../../lib/kafka/raw-records.js'

/** The strict regex isBase64 replaced (for speed): both must accept exactly the same texts. */
const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/

describe('base64 values', () => {
  it.each([
    ['', true],
    ['QQ==', true],
    ['QUI=', true],
    ['QUJD', true],
    ['QQ', true],
    ['QUI', true],
    ['Q', false],
    ['QQ=', false],
    ['QUI==', false],
    ['Q===', false],
    ['QU=I', false],
    ['QUJD-_', false],
    ['QU JD', false],
  ])('%j is base64: %s', (text, ok) => {
    expect(isBase64(text)).toBe(ok)
    expect(decodeBase64(text) !== undefined).toBe(ok)
  })

  it('accepts exactly what the strict regular expression accepts', () => {
    const char = fc.constantFrom(...'ABCXYZabcxyz0189+/=-_ '.split(''))
    fc.assert(
      fc.property(fc.array(char, { maxLength: 12 }).map((cs) => cs.join('')), (text) => {
        expect(isBase64(text)).toBe(STRICT.test(text))
      }),
      { numRuns: 5000 },
    )
  })

  it('every encoding of bytes round-trips, padded or not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64')
        expect(decodeBase64(text)).toEqual(bytes)
        expect(decodeBase64(text.replace(/=+$/, ''))).toEqual(bytes)
      }),
    )
  })
})

describe('event values decoded into the shared buffer', () => {
  it('accept exactly the strict base64 texts, with the bytes Buffer decodes (every 4-character text over valid, padding, URL-safe and invalid characters, alone and next to a quad)', () => {
    // 'ő' (U+0151): Node's decoder reads it by its low byte, as 'Q'.
    const chars = ['Q', 'U', 'E', '=', '-', '_', '*', ' ', 'é', 'ő', '+', '/']
    const texts: string[] = []
    const gen = (prefix: string) => {
      if (prefix.length === 4) texts.push(prefix)
      else for (const c of chars) gen(prefix + c)
    }
    gen('')
    for (const t of texts.slice()) for (const quad of ['QUFB', 'QQ==', 'Q=Q=', '====']) texts.push(quad + t, t + quad)
    const records = texts.map((value, i) => ({ topic: 't', partition: 0, offset: i, timestamp: 1, timestampType: 'CREATE_TIME', value, headers: [] }))
    const parsed = parseKafkaEvent({ eventSource: 'aws:kafka', records: { 't-0': records } })
    const wrong = parsed.filter((r, i) => {
      const accepted = r.error === undefined
      return accepted !== isBase64(texts[i]!) || (accepted && Buffer.compare(Buffer.from(r.value!), Buffer.from(texts[i]!, 'base64')) !== 0)
    })
    expect(wrong.map((r) => texts[Number(r.offset)])).toEqual([])
    expect(parsed.filter((r) => r.error === undefined).length).toBeGreaterThan(1000)
    // The scanner lane's reader of a raw partition (raw-records.ts): the same texts, the same bytes.
    const part = readKafkaEvent({ eventSource: 'aws:kafka', records: { 't-0': records } }, () => true).parts[0]!
    const reader = new RawRecordReader()
    const misread = texts.filter((text, i) => {
      const ok = reader.read(part.raw!, i)
      return ok !== isBase64(text) || (ok && Buffer.compare(Buffer.from(reader.value), Buffer.from(text, 'base64')) !== 0)
    })
    expect(misread).toEqual([])
  })

  it('the raw reader gives each value exactly its bytes, across repeated lengths and a grown buffer', () => {
    // Views are kept by length (raw-records.ts): a value of a length seen before, or read after the
    // buffer grew, must still be exactly the current record's bytes.
    const values = [Buffer.from('{"a":1}'), Buffer.from('{"a":2}'), Buffer.alloc(100_000, 0x61), Buffer.from('{"a":3}'), Buffer.alloc(20_000, 0x62), Buffer.from('{"b":4}')]
    const records = values.map((v, i) => ({ topic: 't', partition: 0, offset: i, timestamp: 1, value: v.toString('base64'), headers: [] }))
    const part = readKafkaEvent({ eventSource: 'aws:kafka', records: { 't-0': records } }, () => true).parts[0]!
    const reader = new RawRecordReader()
    values.forEach((v, i) => {
      expect(reader.read(part.raw!, i)).toBe(true)
      expect(Buffer.compare(Buffer.from(reader.value), v)).toBe(0)
    })
  })
})
