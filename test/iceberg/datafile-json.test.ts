import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import { dataFileFromJSON, dataFileToJSON } from '../../lib/iceberg/datafile-json.js'
import type { DataFile } from '../../lib/iceberg/types.js'

const full: DataFile = {
  content: 0,
  filePath: 's3://b/t/data/ts_day=2024-05-01/a.parquet',
  fileFormat: 'PARQUET',
  specId: 2,
  partition: [19844, 9_007_199_254_740_993n, 'eu', true, 1.5, Uint8Array.of(0, 255), null, Number.NaN],
  recordCount: 1000,
  fileSizeInBytes: 123456,
  columnSizes: new Map([[1, 10], [2, 20]]),
  valueCounts: new Map([[1, 1000]]),
  nullValueCounts: new Map([[2, 3]]),
  nanValueCounts: new Map([[3, 0]]),
  lowerBounds: new Map([[1, Uint8Array.of(1, 2, 3)]]),
  upperBounds: new Map([[1, Uint8Array.of(9)]]),
  splitOffsets: [4, 1000],
  sortOrderId: 0,
  firstRowId: 2n ** 60n,
}

describe('data file JSON for the control table', () => {
  it('round-trips every field, keeping bigint, bytes, NaN and Maps exact', () => {
    const json = dataFileToJSON(full)
    const text = JSON.stringify(json) // plain JSON.stringify must work: no bigint, no Map, no bytes
    expect(dataFileFromJSON(JSON.parse(text))).toEqual(full)
  })

  it('writes bigints as decimal strings and bytes as base64', () => {
    const json = dataFileToJSON(full) as Record<string, unknown>
    expect((json.partition as unknown[])[1]).toEqual({ long: '9007199254740993' })
    expect((json.partition as unknown[])[5]).toEqual({ bytes: 'AP8=' })
    expect(json.lowerBounds).toEqual({ 1: 'AQID' })
    expect(json.firstRowId).toBe('1152921504606846976')
    expect(json).not.toHaveProperty('equalityIds')
  })

  it('round-trips a minimal file and rejects what is not a data file', () => {
    const min: DataFile = { content: 0, filePath: 'p', fileFormat: 'PARQUET', specId: 0, partition: [], recordCount: 1, fileSizeInBytes: 2 }
    expect(dataFileFromJSON(JSON.parse(JSON.stringify(dataFileToJSON(min))))).toEqual(min)
    expect(() => dataFileFromJSON({ path: 'x' })).toThrow(IcebergError)
  })
})
