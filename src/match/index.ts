// The matcher: request normalization, request keys and signatures, four matching modes, and
// misses that explain themselves.
export type { MissContext, MissEntry, MissKind, NearMiss } from './diagnose.ts';
export { closestRecordings, explainMiss } from './diagnose-api.ts';
export { createMatcher } from './matcher-api.ts';
export {
  MATCH_MODES,
  MatchIndex,
  requestDigests,
  requestKeys,
  type Matcher,
  type MatcherOptions,
  type MatcherStats,
  type MatchOptions,
  type MatchMode,
  type MatchResult,
  type Recording,
  type RequestDigests,
  type RequestKeys,
  type Signature,
} from './matcher.ts';
export { detectProvider, normalizeRequest, type RouteRequest } from '../providers/index.ts';
export { DROPPED_ARGS, fingerprintIgnoreKeys } from '../providers/normalize.ts';
export type { Attachment, Endpoint, NormalizeOptions, Provider, RequestView } from '../providers/types.ts';
export { loadRecordingsDir, type LoadOptions } from './recordings.ts';
export { VOLATILE_MARK, VOLATILE_PATTERNS, type VolatileSpan } from '../providers/volatile-text.ts';
