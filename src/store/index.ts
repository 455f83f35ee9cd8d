/**
 * llm-tapedeck/store: the recording collection and its backends (tape file, memory), ReplayCache,
 * the record layouts, modes, redaction, JSON export/import and migration. A separate entry point
 * because the tape backend needs Node's file system, while the core in `llm-tapedeck` also runs
 * where there is none. The frame-level tape functions are internals and not exported; the
 * durable replay store and loadTree are in llm-tapedeck/proxy (they sit above the store).
 *
 * @example
 * import { ReplayCache } from 'llm-tapedeck/store'
 * await using cache = await ReplayCache.open('test/fixtures/qa.tape')
 */
export { RecordCollection, type CloseOptions, type CloseReport, type CollectionOptions, type RecordKind } from './collection.ts';
export { headOf, type HeadScalar, type LoadedRecord, type LoadResult, type RecordBackend, type RecordTable, type RewriteSelect, type StoreWarning } from './backend.ts';
export { MemoryBackend, type MemoryBackendOptions } from './backends/memory.ts';
export { TapeBackend, type TapeBackendOptions } from './backends/tape.ts';
// Shared recordings on Redis (docs/redis.md); the `redis` client is loaded only when one is opened.
export { RedisBackend, type RedisStoreOptions } from './backends/redis-backend.ts';
export { isBackend, storeBackend, type StoreBackendOptions } from './backends/open.ts';
export { maskRedisUrl, type ConnectOptions } from './backends/redis-connection.ts';
export { pullTape, pushTape, type PullResult, type PushResult } from './redis-transfer.ts';
export { exportTapeJSON, importTapeJSON } from './export.ts';
export { exportTapeHar, type HarExport } from './export-har.ts';
export type { CacheHook, CacheHookRecording, HookRecording, RecordingHook } from './hooks.ts';
export { setupTapeDiffs } from './git-diff.ts';
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
export { replayCacheMiddleware, type ReplayCacheMiddleware } from './ai-sdk-cache.ts';
export {
  createTape,
  readTape,
  registerTapeType,
  type TapeContents,
  type TapeHeader,
  type TapeLockOptions,
  type TapeRecordEntry,
  type TapeType,
  type TapeWarning,
} from './tape-file.ts';
export { CREDENTIAL_HEADERS, CREDENTIAL_QUERY, REDACTED, redact, redactor, SECRET_FIELDS, SECRET_HEADERS, SECRET_QUERY, type RedactOptions, type Redactor } from './redact.ts';
export { importCacheJSON, importRecordingsDir, type MigrateOptions, type MigrateResult } from './migrate.ts';
export {
  cacheRecords,
  httpRecords,
  isHttpRecord,
  REPLAY_RECORD_KIND,
  replayRecords,
  responseChunks,
  type HttpRecord,
  type MatchKind,
  type OriginFiling,
  type ReplayTapeRecord,
  type StoredHeaders,
} from './records.ts';
