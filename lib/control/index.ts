/** lib/control's face for the writer: the registration's item-size rules and file-list form. */
export { TX_PAYLOAD_BUDGET, itemSizes, withTransactionBudget } from './tx-budget.js'
export { filesJson, type EncodedFile, type RegisteredFile } from './file-list.js'
