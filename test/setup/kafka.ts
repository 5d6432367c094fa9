/**
 * vitest globalSetup of `npm run test:kafka`: one real Kafka 4 broker (KRaft, lib/local/kafka-broker.ts)
 * for the run, its bootstrap address handed to the workers as KAFKA_TEST_BOOTSTRAP.
 */
import { startKafkaBroker, type KafkaBroker } from '../../lib/local/kafka-broker.js'

let broker: KafkaBroker | undefined

export async function setup(): Promise<() => Promise<void>> {
  broker = await startKafkaBroker({ heapMb: 512 })
  process.env.KAFKA_TEST_BOOTSTRAP = broker.bootstrap
  return async () => {
    await broker?.stop()
    broker = undefined
  }
}
