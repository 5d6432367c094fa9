/**
 * The layer order of Floe's modules, in one place: docs/architecture.md describes it and
 * test/architecture.test.ts enforces it (no production code imports this module). A module imports
 * only modules of lower levels, plus the same-level arrows listed in `peers`; a folder is imported
 * only through its face (`lib/<folder>/index.ts`); root modules (`lib/*.ts`) are imported directly.
 * A new folder or root module must be placed here, or the architecture test fails.
 */

export interface Layer {
  level: number
  name: string
  /** `lib/<folder>` for a folder, `lib/<name>.ts` for a root module, `functions` / `infra` / `bin` for the entry points. */
  modules: string[]
  /** Same-level imports allowed, `from → [to…]`, each for a reason (docs/architecture.md); `'*'`: every module of the level. */
  peers?: Record<string, string[]>
}

export const LAYERS: Layer[] = [
  {
    level: 0,
    name: 'base',
    modules: ['lib/errors.ts', 'lib/log.ts', 'lib/config.ts', 'lib/config-check.ts', 'lib/concurrency.ts', 'lib/clients.ts', 'lib/layers.ts', 'lib/retry'],
    peers: { '*': ['*'] },
  },
  {
    level: 1,
    name: 'formats',
    modules: ['lib/io', 'lib/kafka', 'lib/codec', 'lib/schema'],
    // codec decodes a KafkaRecord's value and returns the Iceberg schema of Avro and envelope values.
    peers: { 'lib/codec': ['lib/kafka', 'lib/schema'] },
  },
  { level: 2, name: 'spec', modules: ['lib/iceberg'] },
  { level: 3, name: 'stores', modules: ['lib/catalog', 'lib/control'] },
  {
    level: 4,
    name: 'work',
    modules: ['lib/writer', 'lib/commit', 'lib/maintenance'],
    // Compaction re-encodes rows with the writer's one Arrow/Parquet encoder and column metrics.
    peers: { 'lib/maintenance': ['lib/writer'] },
  },
  { level: 5, name: 'replay', modules: ['lib/replay'] },
  { level: 6, name: 'tools', modules: ['lib/cli', 'lib/local'], peers: { 'lib/cli': ['lib/local'] } },
  { level: 7, name: 'entry points', modules: ['functions', 'infra', 'bin'] },
]

/** Arrows the level order allows but a folder's concept forbids (DESIGN.md's "must not know about"). */
export const FORBIDDEN: { from: string; to: string; why: string }[] = [
  { from: 'lib/control', to: 'lib/iceberg', why: 'the control table stores file lists in its own terms; the callers convert data files' },
  { from: 'lib/commit', to: 'lib/kafka', why: 'the committer never sees a Kafka record' },
  { from: 'lib/maintenance', to: 'lib/kafka', why: 'maintenance never sees a Kafka record' },
  { from: 'lib/replay', to: 'lib/catalog', why: 'replay goes through the writer path, never to catalogs directly' },
]

/**
 * A folder's second face, each for a reason; importers take the half they need. lib/iceberg's
 * manifests half needs avsc (~30–100 ms to load): apart, the writer's cold start never loads it.
 */
export const EXTRA_FACES: Record<string, { face: string; why: string }> = {
  'lib/iceberg': { face: 'lib/iceberg/manifests.ts', why: 'the Avro half (manifests, scans, append/replace/rewrite): the writer and config never load avsc' },
}
