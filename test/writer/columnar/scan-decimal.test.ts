/**
 * The scanner's reading of 16- to 19-digit decimals (lib/writer/columnar/scan-decimal.ts, through
 * scan-bytes.ts numberAt) against `Number()` of the same text — what JSON.parse gives: every
 * double JSON.stringify writes, arbitrary long decimals, and the hard cases, decimals within a
 * digit of the exact midpoint between two neighbouring doubles.
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { numberAt, numValue } from '../../../lib/writer/columnar/scan-bytes.js'
import { decimal, longDecimal } from '../../../lib/writer/columnar/scan-decimal.js'

/** numberAt's value of `text`, which must be read whole. */
function read(text: string): number {
  const b = Buffer.from(text)
  expect(numberAt(b, 0)).toBe(b.length)
  return numValue[0]!
}

/** `text` read as Number() reads it (toBe: Object.is, so -0 is not 0). */
function expectSame(text: string): void {
  expect(read(text), text).toBe(Number(text))
}

/** The exact decimal expansion of a finite positive double (BigInt arithmetic). */
function exactDecimal(x: number): string {
  const bits = new BigUint64Array(new Float64Array([x]).buffer)[0]!
  const e = Number((bits >> 52n) & 0x7ffn)
  const m = (bits & ((1n << 52n) - 1n)) | (e ? 1n << 52n : 0n)
  const exp = (e || 1) - 1075
  if (exp >= 0) return (m << BigInt(exp)).toString()
  // m / 2^k has exactly k fraction digits: m * 5^k over 10^k.
  const scaled = (m * 5n ** BigInt(-exp)).toString().padStart(-exp + 1, '0')
  return `${scaled.slice(0, scaled.length + exp)}.${scaled.slice(scaled.length + exp)}`
}

/** The decimal halfway between `x` and the next double up, exactly. */
function midpointAbove(x: number): string {
  const next = new Float64Array([x])
  new BigUint64Array(next.buffer)[0]! += 1n
  const [ai, af = ''] = exactDecimal(x).split('.')
  const [ci, cf = ''] = exactDecimal(next[0]!).split('.')
  const places = Math.max(af.length, cf.length) + 1
  const sum = BigInt(ai + af.padEnd(places, '0')) + BigInt(ci + cf.padEnd(places, '0'))
  const mid = (sum / 2n).toString().padStart(places + 1, '0')
  return `${mid.slice(0, mid.length - places)}.${mid.slice(mid.length - places)}`
}

/** `text` (a decimal) cut to `total` significant-position digits (its integer part kept), and the same one unit up in the last digit. */
function cuts(text: string, total: number): string[] {
  const [ip, fp = ''] = text.split('.')
  const int = ip!.replace(/^0+(?=\d)/, '')
  const places = Math.max(1, total - int.length)
  if (fp.length < places || places > 22) return []
  const cut = `${int}.${fp.slice(0, places)}`
  const up = (BigInt(int + fp.slice(0, places)) + 1n).toString().padStart(places + 1, '0')
  return [cut, `${up.slice(0, up.length - places)}.${up.slice(up.length - places)}`]
}

const positive = fc.double({ min: 1e-6, max: 1e12, noNaN: true, noDefaultInfinity: true }).filter((x) => x > 0)

describe('long decimals in the scanner', () => {
  it('reads every double as JSON.stringify writes it, as Number() does', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = JSON.stringify(x)
        expect(read(text), text).toBe(Number(text))
      }),
      { numRuns: 20_000 },
    )
  })

  it('reads arbitrary 16- to 19-digit decimals as Number() does', () => {
    const decimals = fc
      .tuple(fc.integer({ min: 16, max: 19 }), fc.integer({ min: 1, max: 18 }), fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 19n - 1n }))
      .map(([digits, dot, neg, n]) => {
        const s = n.toString().padStart(digits, '0').slice(-digits).replace(/^0/, '1')
        const at = Math.min(dot, digits - 1)
        return `${neg ? '-' : ''}${s.slice(0, at)}.${s.slice(at)}`
      })
    fc.assert(
      fc.property(decimals, expectSame),
      { numRuns: 20_000 },
    )
  })

  it('reads decimals a digit away from the midpoint between two doubles as Number() does', () => {
    fc.assert(
      fc.property(positive, (x) => {
        for (const d of [midpointAbove(x), exactDecimal(x)]) for (const t of [16, 17, 18, 19]) cuts(d, t).forEach(expectSame)
      }),
      { numRuns: 5_000 },
    )
  })

  it('answers itself for nearly every decimal JSON.stringify writes (no string made)', () => {
    let long = 0
    let answered = 0
    const wrong: string[] = []
    for (let i = 0; i < 20_000; i++) {
      const text = JSON.stringify(i / 7 + 0.5)
      const dot = text.indexOf('.')
      const digits = text.length - 1
      if (dot < 0 || digits < 16) continue
      long++
      if (!longDecimal(Buffer.from(text), 0, text.length, digits, text.length - dot - 1)) continue
      answered++
      if (decimal[0] !== Number(text)) wrong.push(text)
    }
    expect(long).toBeGreaterThan(15_000)
    expect(answered / long).toBeGreaterThan(0.999)
    expect(wrong).toEqual([])
  })
})
