/**
 * A v3 table Floe creates (`formatVersion: 3` in its route options), filled by two commits, is
 * read by Spark with the row ids the spec assigns: each data file's rows get first_row_id +
 * position, so the `_row_id`s are exactly 0..n-1, the first commit's rows before the second's,
 * and `_last_updated_sequence_number` is the sequence number of the commit that added the row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { skipReason, startEngines, type Engines, type Json } from './engine.js'
import { commitExactly, startFloe, type Floe } from './floe.js'

const num = (v: Json) => (typeof v === 'object' && v !== null && '$int' in v ? Number(v.$int) : Number(v))
const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ topic: 'lineage', partition: 0, offset: from + i, value: { id: from + i, name: `r${from + i}` } }))

describe.skipIf(skipReason)('v3 row lineage read by Spark', () => {
  let floe: Floe
  let engines: Engines

  beforeAll(async () => {
    floe = await startFloe({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'lineage', table: 'v3_lineage' }], tables: { v3_lineage: { formatVersion: 3 } } }),
    })
    await floe.write(records(0, 4))
    await commitExactly(floe, 4)
    await floe.write(records(4, 3))
    await commitExactly(floe, 3)
    engines = startEngines({ catalogTable: floe.deps.config.catalogTable, warehouse: floe.warehouse })
  })
  afterAll(async () => engines?.close())

  it('Spark reads _row_id 0..n-1 in commit order and each row last-updated sequence number', async () => {
    const md = (await floe.catalog.loadTable({ namespace: 'db', name: 'v3_lineage' })).metadata
    expect(md['format-version']).toBe(3)
    const seqs = [...md.snapshots].map((s) => Number(s['sequence-number'])).sort((a, b) => a - b)
    const out = await engines.spark('SELECT id, _row_id AS row_id, _last_updated_sequence_number AS seq FROM floe.db.v3_lineage ORDER BY _row_id')
    const rows = out.rows.map((r) => ({ id: num(r.id!), rowId: num(r.row_id!), seq: num(r.seq!) }))
    expect(rows.map((r) => r.rowId)).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(rows.filter((r) => r.rowId < 4).map((r) => r.id).sort()).toEqual([0, 1, 2, 3])
    expect(rows.filter((r) => r.rowId >= 4).map((r) => r.id).sort()).toEqual([4, 5, 6])
    expect(rows.map((r) => r.seq)).toEqual([seqs[0], seqs[0], seqs[0], seqs[0], seqs[1], seqs[1], seqs[1]])
  })
})
