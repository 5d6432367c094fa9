import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createClients } from '../../lib/clients.js'
import { IcebergError } from '../../lib/errors.js'
import { bigIntToMinBytes, bytesToUuid, fromBoundBytes, minBytesToBigInt, toBoundBytes, typeIs, uuidToBytes } from '../../lib/iceberg/conversions.js'
import { findCurrentMetadataPath, readTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import { createFileIO, withPathMap } from '../../lib/io/index.js'
import type { NestedField } from '../../lib/schema/types.js'
import { fixturesDir } from '../helpers/fixtures.js'

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' '))
const bytes = (h: string) => Uint8Array.from(h.split(' ').filter(Boolean).map((x) => parseInt(x, 16)))

describe('single-value binary serialization (spec Appendix D)', () => {
  // Each expected byte string is worked out by hand from the spec's table.
  const cases: [string, Parameters<typeof toBoundBytes>[1], string][] = [
    ['boolean', false, '00'],
    ['boolean', true, '01'],
    ['int', 34, '22 00 00 00'],
    ['int', -1, 'ff ff ff ff'],
    ['int', -2147483648, '00 00 00 80'],
    ['long', 34n, '22 00 00 00 00 00 00 00'],
    ['long', -2n, 'fe ff ff ff ff ff ff ff'],
    ['long', 9007199254740993n, '01 00 00 00 00 00 20 00'], // 2^53 + 1 survives
    ['float', 1, '00 00 80 3f'],
    ['float', -2.5, '00 00 20 c0'],
    ['double', 1, '00 00 00 00 00 00 f0 3f'],
    ['double', 0.5, '00 00 00 00 00 00 e0 3f'],
    ['date', 17486, '4e 44 00 00'], // 2017-11-16
    ['date', -1, 'ff ff ff ff'], // 1969-12-31
    ['time', 81068000000n, '00 83 07 e0 12 00 00 00'], // 22:31:08 = 81068 s
    ['timestamp', 1510871468000000n, '00 c3 26 2d 21 5e 05 00'], // 2017-11-16T22:31:08
    ['timestamptz', 1510871468000000n, '00 c3 26 2d 21 5e 05 00'],
    ['timestamp_ns', 1510871468000000001n, '01 b8 69 5f 98 b1 f7 14'],
    ['string', 'iceberg', '69 63 65 62 65 72 67'],
    ['string', 'é€', 'c3 a9 e2 82 ac'],
    ['string', '', ''],
    ['uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 'f7 9c 3e 09 67 7c 4b bd a4 79 3f 34 9c b7 85 e7'],
    ['fixed[4]', bytes('00 01 02 03'), '00 01 02 03'],
    ['binary', bytes('00 01 02 03'), '00 01 02 03'],
    ['decimal(4, 2)', 1420n, '05 8c'], // 14.20 → unscaled 1420 = 0x058c
    ['decimal(9, 2)', 0n, '00'],
    ['decimal(9, 2)', 127n, '7f'],
    ['decimal(9, 2)', 128n, '00 80'], // needs a sign byte
    ['decimal(9, 2)', -128n, '80'],
    ['decimal(9, 2)', -129n, 'ff 7f'],
    ['decimal(9, 2)', -1n, 'ff'],
    ['decimal(38, 0)', 10n ** 37n, '07 85 ee 10 d5 da 46 d9 00 f4 36 a0 00 00 00 00'],
  ]

  it.each(cases)('%s %s serializes to [%s]', (type, value, expected) => {
    expect(hex(toBoundBytes(type, value))).toBe(hex(bytes(expected)))
  })

  it.each(cases)('%s [%s] reads back', (type, value, expected) => {
    // every float here is exact in 32 bits, so equality holds
    expect(fromBoundBytes(type, bytes(expected))).toEqual(value)
  })

  it('accepts a safe-integer number for 64-bit types and 16 bytes for a uuid', () => {
    expect(hex(toBoundBytes('long', 34))).toBe('22 00 00 00 00 00 00 00')
    const u = bytes('f7 9c 3e 09 67 7c 4b bd a4 79 3f 34 9c b7 85 e7')
    expect(toBoundBytes('uuid', u)).toEqual(u)
  })

  it('reads a 4-byte bound of a column promoted from int to long, and float to double', () => {
    expect(fromBoundBytes('long', bytes('ff ff ff ff'))).toBe(-1n)
    expect(fromBoundBytes('double', bytes('00 00 80 3f'))).toBe(1)
  })

  it('rejects values of the wrong type or range, naming the type and value', () => {
    expect(() => toBoundBytes('int', 2 ** 31)).toThrow(/int bound 2147483648: expected a 32-bit integer/)
    expect(() => toBoundBytes('long', 1.5)).toThrow(IcebergError)
    expect(() => toBoundBytes('long', 2n ** 63n)).toThrow(/out of the 64-bit range/)
    expect(() => toBoundBytes('string', 5)).toThrow(/string bound 5/)
    expect(() => toBoundBytes('uuid', 'not-a-uuid')).toThrow(/invalid uuid 'not-a-uuid'/)
    expect(() => toBoundBytes('struct', 1)).toThrow(/no single-value binary serialization/)
    expect(() => fromBoundBytes('int', bytes('01 02'))).toThrow(/int bound is 4 bytes, got 2/)
    expect(() => fromBoundBytes('string', bytes('ff fe'))).toThrow(/not valid UTF-8/)
  })

  it('minimal two-complement bytes round-trip for many values', () => {
    for (const v of [0n, 1n, -1n, 255n, 256n, -256n, -257n, 2n ** 63n, -(2n ** 63n), 10n ** 30n, -(10n ** 30n)]) {
      expect(minBytesToBigInt(bigIntToMinBytes(v))).toBe(v)
    }
    expect(hex(bigIntToMinBytes(-256n))).toBe('ff 00')
    expect(hex(bigIntToMinBytes(255n))).toBe('00 ff')
  })
})

describe('helpers the transforms, partition values and manifests share', () => {
  it('a uuid is its 16 big-endian bytes, any case in, lower case out', () => {
    const u = uuidToBytes('F79C3E09-677C-4BBD-A479-3F349CB785E7')
    expect(hex(u)).toBe('f7 9c 3e 09 67 7c 4b bd a4 79 3f 34 9c b7 85 e7')
    expect(bytesToUuid(u)).toBe('f79c3e09-677c-4bbd-a479-3f349cb785e7')
    expect(() => bytesToUuid(bytes('01 02'))).toThrow(/a uuid is 16 bytes, got 2/)
  })

  it('timestamptz_ns and decimal bounds past 64 bits read back exactly', () => {
    for (const [type, v] of [['timestamptz_ns', -(2n ** 63n)], ['timestamptz_ns', 2n ** 63n - 1n], ['decimal(38, 10)', -(10n ** 37n) + 1n]] as const)
      expect(fromBoundBytes(type, toBoundBytes(type, v))).toBe(v)
  })

  it('typeIs matches a primitive bare or with parameters, never a longer name', () => {
    expect(typeIs('fixed[16]', 'fixed')).toBe(true)
    expect(typeIs('decimal(9, 2)', 'decimal')).toBe(true)
    expect(typeIs('decimal', 'decimal')).toBe(true)
    expect(typeIs('fixedish', 'fixed')).toBe(false)
  })
})

describe('agreement with bounds other engines wrote (fixtures)', () => {
  it('every lower/upper bound in the fixture tables decodes and re-encodes to the same bytes', async () => {
    const root = fixturesDir('iceberg')
    const dirs: string[] = []
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name)
        if (!statSync(path).isDirectory()) continue
        if (name === 'metadata' && readdirSync(path).some((f) => f.endsWith('.metadata.json'))) dirs.push(dir)
        else walk(path)
      }
    }
    walk(root)
    const base = createFileIO(createClients({ region: 'us-east-1' }))
    const perType = new Map<string, number>()
    const mismatches: string[] = []
    for (const dir of dirs) {
      let md, live
      try {
        md = await readTableMetadata(base, await findCurrentMetadataPath(base, pathToFileURL(dir).href))
        live = await liveDataFiles(withPathMap(base, [[md.location, pathToFileURL(dir).href]]), md)
      } catch {
        continue // broken fixtures are the Iceberg core tests' business
      }
      const typeOf = new Map<number, string>()
      const collect = (fields: NestedField[]) => {
        for (const f of fields) {
          if (typeof f.type === 'string') typeOf.set(f.id, f.type)
          else if (f.type.type === 'struct') collect(f.type.fields)
        }
      }
      for (const schema of md.schemas) collect(schema.fields)
      for (const { dataFile } of live) {
        for (const bounds of [dataFile.lowerBounds, dataFile.upperBounds]) {
          for (const [id, stored] of bounds ?? []) {
            const type = typeOf.get(id)
            if (!type) continue
            const again = toBoundBytes(type, fromBoundBytes(type, stored))
            if (hex(again) !== hex(stored)) mismatches.push(`${dir}: ${type} ${hex(stored)} -> ${hex(again)}`)
            const key = type.replace(/\(.*|\[.*/, '')
            perType.set(key, (perType.get(key) ?? 0) + 1)
          }
        }
      }
    }
    expect(mismatches).toEqual([])
    for (const t of ['boolean', 'int', 'long', 'float', 'double', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'string', 'uuid', 'fixed', 'binary']) {
      expect(perType.get(t) ?? 0, t).toBeGreaterThan(0)
    }
  }, 120_000)
})
