/**
 * A recorded realtime session as replay walks it: its opening (the server frames before the
 * client's first), then each client frame with the server frames that followed it. Made once per
 * session, on demand: switching sessions (./switch.ts) and checking echoed ids (./issued-ids.ts)
 * both read it.
 */
import type { RealtimeFrame } from '../store/records.ts';
import type { ServerFrame } from './opening.ts';
import type { LoadedSession } from './tape.ts';

type ClientFrame = Extract<RealtimeFrame, { c: 1 }>;

/** A session's opening, then each client frame with the server frames after it. */
export interface SessionSteps {
  prelude: ServerFrame[];
  steps: { client: ClientFrame; server: ServerFrame[] }[];
}

const made = new WeakMap<LoadedSession, SessionSteps>();

/**
 * The steps of `s` (kept for the session's life).
 *
 * @example
 * const { prelude, steps } = sessionSteps(session); steps[0].client // the client's first frame
 */
export function sessionSteps(s: LoadedSession): SessionSteps {
  let l = made.get(s);
  if (!l) {
    l = { prelude: [], steps: [] };
    for (const f of s.frames) {
      if ('c' in f) l.steps.push({ client: f, server: [] });
      else (l.steps.length > 0 ? l.steps[l.steps.length - 1]!.server : l.prelude).push(f);
    }
    made.set(s, l);
  }
  return l;
}
