/**
 * The writer's real dependencies from a config and AWS clients: what the writer and replay
 * handlers build once per cold start, and what `floe replay` and the local pipeline build too.
 */
import { createCatalog, withPointerCache } from '../catalog/index.js'
import type { AwsClients } from '../clients.js'
import { createDecoders } from '../codec/index.js'
import type { FloeConfig } from '../config.js'
import { createControlContext } from '../control/index.js'
import { createFileIO } from '../io/index.js'
import { compileRoutes } from './routing.js'
import type { WriterDeps } from './types.js'

export async function createWriterDeps(config: FloeConfig, clients: AwsClients): Promise<WriterDeps> {
  const io = createFileIO(clients)
  return {
    config,
    io,
    // The committer's catalog is never cached: only the writer's loads (lib/catalog/pointer-cache.ts).
    catalog: withPointerCache(await createCatalog(config, clients, io), config),
    control: createControlContext(config, clients.doc, io),
    decoders: await createDecoders(config, clients),
    router: compileRoutes(config.routes, config.limits),
  }
}
