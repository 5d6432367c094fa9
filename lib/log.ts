/** Logger and metrics (EMF), wired once. Handlers and the CLI import these singletons. */
import { Logger } from '@aws-lambda-powertools/logger'
import { Metrics } from '@aws-lambda-powertools/metrics'
import { redactUrls } from './errors.js'

/** Every string of every log line loses URL credentials (error messages and stacks of other libraries included). */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floe',
  jsonReplacerFn: (_key: string, value: unknown) => (typeof value === 'string' ? redactUrls(value) : value),
})

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Floe',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floe',
})

export { MetricUnit } from '@aws-lambda-powertools/metrics'
