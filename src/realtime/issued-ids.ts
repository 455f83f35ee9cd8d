/**
 * Ids the server issued, in a replay's comparison of client frames. A client frame is keyed with
 * its ids renumbered by first use in the client's own frames (docs/realtime.md, "Keys"), so ids
 * the client makes up never split recordings. That alone took an id the server issued and the
 * client echoes (a tool's `call_id` in `function_call_output`, a `previous_item_id`) for one the
 * client made up: a client that sent the function call's item id, or `call_bogus`, as its
 * `call_id` got the recorded success, where the API rejects an id it never issued.
 *
 * So, once a frame's key matched, its ids are compared by where they come from, in the order the
 * session saw them (the server frames sent so far, the client frames matched so far): where the
 * recorded client used an id the session had seen already (one the server issued, or its own),
 * this client must use the one it knows in its place (the same id, or the one a replay gave it
 * instead: ReplaySession's swap); where the recorded client made up a new one, this client must
 * not use one the session had (an id of the server's in place of its own). The recording is read
 * as stored (the client's frames parsed, the server's as their wire text), so this holds for
 * tapes recorded by any release.
 */
import type { RealtimeProtocol } from '../providers/realtime.ts';
import { serverShape } from './opening.ts';
import { sessionSteps } from './steps.ts';
import type { LoadedSession } from './tape.ts';

/** An id at its place in a keyed frame (the provider's frameKey with ids wrapped, not renumbered). */
class IdAt {
  constructor(readonly raw: string) {}
}

/** Per session: the raw ids of its opening (index 0) and of each step, client frame then server frames (index k + 1). */
const cache = new WeakMap<LoadedSession, (readonly string[] | undefined)[]>();


/**
 * The raw ids a recorded session holds in step `k` (-1: its opening), in the order they come:
 * the client frame's (the members the provider's keys renumber), then those of the server frames
 * after it (those, and any `*_id` member: src/realtime/opening.ts). Read once per session.
 *
 * @example
 * idsOfStep(openai, session, -1) // ['sess_abc'] (session.created)
 * idsOfStep(openai, session, 3)  // ['item_x', 'call_y'] (a function_call_output echoing the call)
 */
export function idsOfStep(protocol: RealtimeProtocol, session: LoadedSession, k: number): readonly string[] {
  let per = cache.get(session);
  if (!per) cache.set(session, (per = []));
  const known = per[k + 1];
  if (known) return known;
  const l = sessionSteps(session);
  const out: string[] = [];
  const collect = (raw: string): string => {
    out.push(raw);
    return raw;
  };
  const step = k < 0 ? undefined : l.steps[k];
  if (step && 'msg' in step.client) protocol.frameKey(step.client.msg, collect);
  for (const f of k < 0 ? l.prelude : (step?.server ?? [])) serverShape(protocol, f, collect);
  per[k + 1] = out;
  return out;
}

/** Where a client frame's id is not the one the recording's has in its place: the path, what the client sent, and what it should have (undefined: an id of its own). */
export interface IdDifference {
  path: string;
  got: string;
  /** The id the client knows in the recorded one's place (undefined: the recorded client made up a new one there). */
  want: string | undefined;
}

/**
 * The first id of `mine` (this client's frame) that does not stand where the recorded frame's
 * does, given the ids the session saw before this frame (`known`: recorded raw ids) and what the
 * client knows in a recorded id's place (`visible`). The two frames key alike (their ids
 * renumbered by the client's first use), so they have the same members.
 *
 * @example
 * idDifference(openai, mine, rec.msg, (r) => seen.has(r), (r) => swap.get(r) ?? r)
 * // { path: 'item.call_id', got: 'call_bogus', want: 'call_abc' }
 */
export function idDifference(protocol: RealtimeProtocol, mine: unknown, recorded: unknown, known: (raw: string) => boolean, visible: (raw: string) => string, seenVisible: (id: string) => boolean): IdDifference | undefined {
  const wrap = (raw: string): string => new IdAt(raw) as unknown as string;
  return walk(protocol.frameKey(mine, wrap), protocol.frameKey(recorded, wrap), '');

  function walk(a: unknown, b: unknown, path: string): IdDifference | undefined {
    if (a instanceof IdAt && b instanceof IdAt) {
      if (known(b.raw)) {
        const want = visible(b.raw);
        return a.raw === want ? undefined : { path: path || '(value)', got: a.raw, want };
      }
      // A new id in the recording (the recorded client's own): this client's must be new too.
      return seenVisible(a.raw) ? { path: path || '(value)', got: a.raw, want: undefined } : undefined;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        const d = walk(a[i], b[i], `${path}[${i}]`);
        if (d) return d;
      }
      return undefined;
    }
    if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
      const x = a as Record<string, unknown>;
      for (const [k, v] of Object.entries(b as Record<string, unknown>)) {
        if (!(k in x)) continue;
        const d = walk(x[k], v, path ? `${path}.${k}` : k);
        if (d) return d;
      }
    }
    return undefined;
  }
}
