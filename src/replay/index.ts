// Trace tokens and byte-exact replay by trace token, the pure part: the in-memory store, the
// `POST /v1/replay` decision and configuration. The tape-backed store is in llm-tapedeck/store.
export { REPLAY_DEFAULTS, REPLAY_ENV, resolveReplayConfig, type ReplayConfig, type ResolvedReplayConfig } from './config.ts';
export { handleReplay, type ReplayErrorCode, type ReplayResponse, type ReplaySource } from './handler.ts';
export { ReplayStore, type ReplayEntry, type ReplayLookup, type ReplayMeta, type ReplayPut, type ReplayPutAnswer, type ReplayStoreOptions, type ReplayStoreStats, type ReplayTraceParts } from './store.ts';
