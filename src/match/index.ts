// The matcher: request normalization, request keys and signatures, four matching modes, and
// misses that explain themselves.
export { closestRecordings, explainMiss, type MissEntry, type MissKind, type NearMiss } from './diagnose.ts';
export {
  createMatcher,
  MATCH_MODES,
  MatchIndex,
  requestDigests,
  requestKeys,
  type Matcher,
  type MatcherOptions,
  type MatcherStats,
  type MatchMode,
  type MatchResult,
  type Recording,
  type RequestDigests,
  type RequestKeys,
  type Signature,
} from './matcher.ts';
export { detectProvider, DROPPED_ARGS, fingerprintIgnoreKeys, normalizeRequest } from './normalize.ts';
export type { Attachment, NormalizeOptions, Provider, RequestView } from './types.ts';
export { loadRecordingsDir, type LoadOptions } from './recordings.ts';
export { VOLATILE_MARK, VOLATILE_PATTERNS, type VolatileSpan } from './volatile-text.ts';
