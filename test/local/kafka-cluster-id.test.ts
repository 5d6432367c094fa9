/**
 * The local broker's cluster id (lib/local/kafka-broker.ts): Kafka's storage tool parses
 * `-t <id>` with an argument parser that takes an id starting with '-' for an option and refuses
 * to format, which failed one broker start in 64 (CI's test:kafka did).
 */
import { expect, it } from 'vitest'
import { newClusterId } from '../../lib/local/kafka-broker.js'

it('cluster ids are 22 base64url characters and never start with "-"', () => {
  // A generator that ignored the rule would start with '-' in 2,000 draws with probability 1 − (63/64)^2000.
  const ids = Array.from({ length: 2_000 }, newClusterId)
  for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/)
  expect(new Set(ids).size).toBe(ids.length)
})
