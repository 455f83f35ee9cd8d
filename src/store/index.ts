/**
 * llm-tapedeck/store: tapes (the files recordings live in), record/replay modes and ReplayCache.
 * A separate entry point because it needs Node's file system, while the core in `llm-tapedeck`
 * also runs where there is none.
 *
 * @example
 * import { ReplayCache } from 'llm-tapedeck/store'
 * await using cache = await ReplayCache.open('test/fixtures/qa.tape')
 */
export { RecordCollection, type CloseOptions, type CloseReport, type CollectionOptions, type RecordKind } from './collection.ts';
export { headOf, type HeadScalar, type LoadedRecord, type LoadResult, type RecordBackend, type RewriteSelect, type StoreWarning } from './backend.ts';
export { MemoryBackend } from './backends/memory.ts';
export { TapeBackend, type TapeBackendOptions } from './backends/tape.ts';
export { exportTapeJSON, importTapeJSON } from './export.ts';
export { resolveMode, resolveModeWithSource, TAPE_MODES, type TapeMode, type TapeModeSource } from './mode.ts';
export {
  activeReplayCache,
  ReplayCache,
  withReplayCache,
  type ReplayPutOptions,
  type ReplayCacheCloseOptions,
  type ReplayCacheOptions,
  type ReplayRecord,
} from './replay-cache.ts';
export {
  appendRecords,
  createTape,
  decodeFrame,
  peekFrame,
  readTape,
  registerTapeType,
  scanTape,
  rewriteTape,
  withTapeLock,
  type AppendOptions,
  type TapeContents,
  type TapeHeader,
  type TapeLockOptions,
  type PeekedScalar,
  type TapeRecordEntry,
  type TapeScan,
  type TapeType,
  type TapeWarning,
} from './tape-file.ts';
export { REDACTED, redact, redactor, SECRET_FIELDS, SECRET_HEADERS, SECRET_QUERY, type RedactOptions, type Redactor } from './redact.ts';
// Conversation tree and replay store on tapes.
export { loadTree, type LoadTreeOptions } from '../tree/load.ts';
export { DurableReplayStore, openReplayStore, REPLAY_RECORD_KIND, type DurableReplayOptions, type ReplayTapeRecord } from '../replay/durable.ts';
export { importCacheJSON, importRecordingsDir, type MigrateOptions, type MigrateResult } from './migrate.ts';
export { inRecordOrder, RECORD_FIELDS, sortedKeys } from './record-order.ts';
