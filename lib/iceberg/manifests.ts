/** lib/iceberg's second face, the Avro half (avsc): manifests and manifest lists, scans, append / replace / manifest rewrites. Apart so the writer's cold start never loads avsc. */
export { appendFiles, filesWrittenBy, newSnapshotId, type AppendOptions } from './append.js'
export { replaceDataFiles, type AddedFile, type ReplaceOptions } from './replace.js'
export { liveDataFiles, liveEntries, snapshotManifests, readManifestList, readManifest } from './scan.js'
export { decodeManifest, encodeManifest, type DecodedManifest } from './manifest.js'
export { decodeManifestList, encodeManifestList } from './manifest-list.js'
export { planManifestRewrite, rewriteManifests } from './rewrite-manifests.js'
