/** The control-table context the writer and the committer share. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import type { FloeConfig } from '../config.js'
import type { FileIO } from '../io/index.js'
import type { ControlContext } from './types.js'

/** Spilled file lists live beside the tables, under the warehouse (orphan cleanup knows the prefix). */
export const spillPrefixFor = (config: FloeConfig): string => `${config.warehouse}/_floe/spill`

export function createControlContext(config: FloeConfig, doc: DynamoDBDocumentClient, io: FileIO): ControlContext {
  return { doc, table: config.controlTable, io, spillPrefix: spillPrefixFor(config), config }
}
