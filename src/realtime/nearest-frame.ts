/**
 * How far a recorded session's first client frame is from a connect's: the distance a miss at
 * the first frame (Gemini's `setup`) picks the recording it is told against by, so the miss
 * names what the user changed. Counted as the miss compares the two frames (ids renumbered, the
 * connect's secrets masked as the recording's were): the differing members.
 */
import { differenceCount } from '../match/json-difference.ts';
import type { RealtimeProtocol } from '../providers/realtime.ts';
import { Ids } from './ids.ts';
import type { LoadedSession } from './tape.ts';

/**
 * The distance from `mine` (gives the connect's first frame, parsed and masked: read only when a
 * miss needs it) to each session: the members its first client frame differs in; a session
 * whose first client frame is audio or binary, or that has none, is farthest.
 *
 * @example
 * const distance = firstFrameDistance(geminiProtocol, () => ({ setup: { model: 'models/m', systemInstruction: 'be nice' } }))
 * distance(session) // 1: the recorded setup lacks systemInstruction
 */
export function firstFrameDistance(protocol: RealtimeProtocol, mine: () => unknown): (s: LoadedSession) => number {
  let got: { key: unknown } | undefined;
  return (s) => {
    got ??= { key: protocol.frameKey(mine(), new Ids().id) };
    const f = s.frames.find((x) => 'c' in x);
    return f && 'msg' in f ? differenceCount(got.key, protocol.frameKey(f.msg, new Ids().id)) : Number.POSITIVE_INFINITY;
  };
}
