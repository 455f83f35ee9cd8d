/**
 * createMatcher as the package's entries give it: its options object's names are checked
 * before a matcher is made. In plain JavaScript `createMatcher({ recordings, allowRepeat: true })`
 * otherwise made a matcher that missed every repeated request, and `{ matchMode: 'exact' }` one
 * that fell back to other requests' recordings, without a word. The page bundle (a 100 KB
 * budget) makes its matchers from options it builds itself, with matcher.ts's createMatcher.
 */
import { checkOptionNames, optionNames } from '../option-names.ts';
import { createMatcher as makeMatcher, type Matcher, type MatcherOptions, type MatchOptions } from './matcher.ts';

const MATCH_OPTIONS = optionNames<MatchOptions>()(['diagnose']);
const MATCHER_OPTIONS = optionNames<MatcherOptions>()(['mode', 'recordings', 'allowRepeats', 'ignoreArgs', 'source', 'recordCommand', 'entry', 'memo', 'used', 'fingerprints', 'provider', 'endpoint', 'volatileKeys', 'volatileText']);

/**
 * A matcher over recorded request/response pairs: `match(request)` gives the recording that
 * answers it (exact key, then in hybrid mode the same signature, then the next in order, each
 * fallback with a warning), or throws E_MISS saying what differs from the closest recording.
 *
 * @example
 * const m = createMatcher({ mode: 'hybrid', recordings })
 * const { recording, matchedBy, warnings } = m.match(request)
 */
export function createMatcher(opts: MatcherOptions): Matcher {
  checkOptionNames(opts, MATCHER_OPTIONS, 'createMatcher', 'docs/matching.md');
  const matcher = makeMatcher(opts);
  // match()'s own options are checked here too: `{ diagnoze: false }` otherwise left every miss
  // diagnosed (the slow path the option exists to skip) without a word.
  const match = matcher.match;
  return {
    ...matcher,
    match(request: unknown, how?: MatchOptions) {
      checkOptionNames(how, MATCH_OPTIONS, 'match', 'docs/matching.md');
      return match(request, how);
    },
  };
}
