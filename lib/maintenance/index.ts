/** Table maintenance under the committer's lease: compaction, snapshot expiry, manifest rewrites, orphan cleanup. */
export { ALL_TASKS, runMaintenance, type MaintenanceRunResult, type MaintenanceTask } from './run.js'
export type { MaintenanceDeps } from './types.js'
export { eventOptions, maintenanceDeadline, summarizeMaintenance, type MaintenanceSummary } from './invocation.js'
