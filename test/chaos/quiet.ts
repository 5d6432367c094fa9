/**
 * Imported first by the chaos CLI, before anything that builds Floe's Metrics singleton: orphan
 * cleanup runs in the harness process, and its EMF lines (flushed every 100 values) would break
 * into the progress output (the containers already run with metrics disabled).
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'true'
