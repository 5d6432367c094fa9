/** Logger and metrics (EMF), wired once. Handlers and the CLI import these singletons. */
import { Logger } from '@aws-lambda-powertools/logger'
import { Metrics } from '@aws-lambda-powertools/metrics'

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floe' })

export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Floe',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floe',
})

export { MetricUnit } from '@aws-lambda-powertools/metrics'
