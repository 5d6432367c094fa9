#!/usr/bin/env node
// The `floe` command. Floe is TypeScript run through tsx (no build step), so register tsx's ESM
// loader first, then hand over to lib/cli/main.ts.
import { register } from 'tsx/esm/api'

// Floe supports Node 20; the AWS SDK's "Node 22 needed from 2027" notice is noise on every run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

// On the command line the handlers' structured logs and EMF metrics are noise: commands print
// their own output. Set POWERTOOLS_LOG_LEVEL=INFO (or DEBUG) to see the handlers' logs.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN'
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true'

register()
const { main } = await import('../lib/cli/index.ts')
const code = await main(process.argv.slice(2))
// Exit explicitly: idle SDK sockets or timers of a finished command must not keep us alive.
process.exit(code)
