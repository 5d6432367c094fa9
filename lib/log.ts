/** Logger and metrics (EMF), wired once. Handlers and the CLI import these singletons. */
import { Logger } from '@aws-lambda-powertools/logger'
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics'
import { redactUrls } from './errors.js'

/** The logger's JSON replacer: every string of every log line loses URL credentials (error messages and stacks of other libraries included). */
export const logJsonReplacer = (_key: string, value: unknown): unknown => (typeof value === 'string' ? redactUrls(value) : value)

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floe', jsonReplacerFn: logJsonReplacer })

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Floe',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floe',
})

export { MetricUnit }

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit]

/** Metrics to emit, by name: a count, or a value with its unit. */
export type MetricValues = Record<string, number | { value: number; unit: Unit }>

/** The one way Floe emits metrics (EMF, flushed by the handler's logMetrics middleware): in the order given. */
export function emitMetrics(values: MetricValues): void {
  for (const [name, v] of Object.entries(values)) {
    if (typeof v === 'number') metrics.addMetric(name, MetricUnit.Count, v)
    else metrics.addMetric(name, v.unit, v.value)
  }
}
