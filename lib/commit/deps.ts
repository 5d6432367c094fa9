/** The committer's real dependencies from a config and AWS clients (the committer handler, `floe commit`, `floe status`, the local pipeline). */
import { createCatalog } from '../catalog/index.js'
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import { createControlContext } from '../control/index.js'
import { createFileIO } from '../io/index.js'
import type { CommitDeps } from './types.js'

export async function createCommitterDeps(config: FloeConfig, clients: AwsClients): Promise<CommitDeps> {
  const io = createFileIO(clients)
  return { config, io, catalog: await createCatalog(config, clients, io), control: createControlContext(config, clients.doc, io) }
}
