/**
 * tapedeck/store: tapes (the files recordings live in), record/replay modes and ReplayCache.
 * A separate entry point because it needs Node's file system, while the core in `tapedeck`
 * also runs where there is none.
 *
 * @example
 * import { ReplayCache } from 'tapedeck/store'
 * await using cache = await ReplayCache.open('test/fixtures/qa.tape')
 */
export { exportTapeJSON, importTapeJSON } from './export.ts';
export { resolveMode, resolveModeWithSource, TAPE_MODES, type TapeMode, type TapeModeSource } from './mode.ts';
export {
  activeReplayCache,
  ReplayCache,
  withReplayCache,
  type ReplayCacheCloseOptions,
  type ReplayCacheOptions,
  type ReplayRecord,
} from './replay-cache.ts';
export {
  appendRecords,
  createTape,
  readTape,
  rewriteTape,
  withTapeLock,
  type AppendOptions,
  type TapeContents,
  type TapeHeader,
  type TapeLockOptions,
  type TapeRecordEntry,
  type TapeWarning,
} from './tape-file.ts';
export { REDACTED, redact, redactor, SECRET_FIELDS, SECRET_HEADERS, SECRET_QUERY, type RedactOptions, type Redactor } from './redact.ts';
