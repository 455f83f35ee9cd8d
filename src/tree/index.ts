// The conversation tree: pure, no file system; `loadTree` in llm-tapedeck/store reads one
// from a tape.
export {
  ConversationTree,
  type Alternative,
  type AnswerOrigin,
  type ConversationHashes,
  type Divergence,
  type FindOptions,
  type FindResult,
  type PreviousResponseMarker,
  type ResponseInput,
  type TreeInput,
  type TreeNode,
  type TreeOptions,
  type TreeRecord,
  type TreeStats,
  type TreeWarning,
} from './tree.ts';
export { formatTree, messageExcerpt, type FormatOptions } from './format.ts';
export { normalizeExchange, responseMessages, type NormalizedExchange } from './response.ts';
export { httpRecordExchange } from './proxy-record.ts';
