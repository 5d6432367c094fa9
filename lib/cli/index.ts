/** The `floe` command (bin/floe.mjs runs `main`): flags parsed here, deps built through the same factories as the handlers. */
export { main } from './main.js'
