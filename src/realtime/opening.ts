/**
 * A session's opening: the server frames it sent before the client's first frame (OpenAI's
 * `session.created`). Replay sends the opening of a session at connect, before the client's
 * first frame can choose which session the connect gets; it may then choose another session
 * of the connect only if that one opened the same way, so that what the client saw holds.
 *
 * Two openings are the same when they differ only in what changes on every run: the ids the
 * server made up (`session.id`, `response_id`..., renumbered by first use, as the provider's
 * keys of client frames renumber ids; `event_id` left out, as there), and times (members ending
 * in `_at`, such as `expires_at`: OpenAI names its Unix times that way). The chosen session's
 * ids are then given back to the client as the ones it was sent (`openingIds`), as a replay
 * gives a client's own item ids back. A replay that goes on with another session in the middle
 * (src/realtime/switch.ts) compares the server frames sent so far the same way (`serverShape`).
 */
import { hashValue } from '../core/index.ts';
import type { RealtimeProtocol } from '../providers/realtime.ts';
import type { RealtimeFrame } from '../store/records.ts';
import { Ids } from './ids.ts';
import type { LoadedSession } from './tape.ts';

/** A frame the server sent. */
export type ServerFrame = Exclude<RealtimeFrame, { c: 1 }>;

/**
 * A session's frames with the server's opening first: a frame the server sends on connect
 * (`opensSession`: OpenAI's `session.created`) that came after client frames (a client that
 * spoke as soon as the socket opened got its frame to the proxy first) is moved before them.
 * Without it such a session had no opening: a client waiting for `session.created` got nothing
 * on connect, and the session "opened differently" from the connect's other sessions, so
 * replaying them out of recorded order missed, depending on a race when they were recorded.
 *
 * @example
 * openingFirst(openai, [{ c: 1, ...sessionUpdate }, { text: '{"type":"session.created",...}' }, ...])
 * // [{ text: '{"type":"session.created",...}' }, { c: 1, ...sessionUpdate }, ...]
 */
export function openingFirst(protocol: RealtimeProtocol | undefined, frames: RealtimeFrame[]): RealtimeFrame[] {
  if (!protocol?.opensSession) return frames;
  const i = frames.findIndex((f) => !('c' in f));
  if (i <= 0) return frames;
  const f = frames[i]!;
  if (!('text' in f)) return frames;
  let msg: unknown;
  try {
    msg = JSON.parse(f.text);
  } catch {
    return frames;
  }
  return protocol.opensSession(msg) ? [f, ...frames.slice(0, i), ...frames.slice(i + 1)] : frames;
}

/** The server frames before the first client frame. */
function opening(s: LoadedSession): ServerFrame[] {
  const out: ServerFrame[] = [];
  for (const f of s.frames) {
    if ('c' in f) break;
    out.push(f);
  }
  return out;
}

/** A JSON value without members that hold a time (`*_at`). */
function timeless(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(timeless);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!k.endsWith('_at')) out[k] = timeless(x);
  return out;
}

/**
 * A server frame's members whose name ends in `_id` (`response_id`, `item_id`), which hold ids
 * the server made up, each given to `id` (the client frames' keys renumber only the members the
 * provider names; `event_id` is left out there). Each is replaced by an object under `#`, a
 * member no provider renumbers, so the provider's key does not number it a second time.
 */
function serverIds(v: unknown, id: (raw: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => serverIds(x, id));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = k.endsWith('_id') && k !== 'event_id' && typeof x === 'string' ? { '#': id(x) } : serverIds(x, id);
  return out;
}

/**
 * What a server frame is compared by, up to the server's ids and times: the ids it holds given
 * to `id` in order (see Ids), times left out; a frame that is not JSON text by its bytes (audio
 * by its digest).
 *
 * @example
 * serverShape(openai, { ms: 0, text: '{"type":"session.created","session":{"id":"sess_1","expires_at":1}}' }, new Ids().id)
 * // { type: 'session.created', session: { id: '#1' } }
 */
export function serverShape(protocol: RealtimeProtocol, f: ServerFrame, id: (raw: string) => string): unknown {
  if ('blob' in f) return { blob: f.blob };
  // Audio in the text is a blob reference already (`tapedeck-blob:<sha256>`): compared as text.
  let msg: unknown;
  try {
    msg = JSON.parse(f.text);
  } catch {
    return { text: f.text };
  }
  return timeless(protocol.frameKey(serverIds(msg, id), id));
}

/** Openings worked out so far (a loaded session is read-only, and of one protocol: its connect key names it). */
const known = new WeakMap<LoadedSession, { key: string; ids: string[] }>();

/** The compared shape of a session's opening, and the raw ids it holds in order of first use. */
function openingOf(protocol: RealtimeProtocol, s: LoadedSession): { key: string; ids: string[] } {
  let o = known.get(s);
  if (!o) {
    const n = new Ids();
    const shapes = opening(s).map((f) => serverShape(protocol, f, n.id));
    known.set(s, (o = { key: hashValue(shapes), ids: n.raws }));
  }
  return o;
}

/**
 * Whether two sessions opened the same way: the same server frames before the client's first,
 * up to the server's ids and times.
 *
 * @example
 * sameOpening(openai, recordedA, recordedB) // true: two `session.created` with other session ids
 */
export function sameOpening(protocol: RealtimeProtocol, a: LoadedSession, b: LoadedSession): boolean {
  return a === b || openingOf(protocol, a).key === openingOf(protocol, b).key;
}

/**
 * For a session chosen after another's opening was sent (the two open the same way): each id
 * of the chosen session's opening that differs from the one the client was sent in its place,
 * mapped to that one (`sess_B` -> `sess_A`), so the rest of the session names what the client saw.
 *
 * @example
 * openingIds(openai, sent, chosen) // Map { 'sess_B' => 'sess_A' }
 */
export function openingIds(protocol: RealtimeProtocol, sent: LoadedSession, chosen: LoadedSession): Map<string, string> {
  const out = new Map<string, string>();
  if (sent === chosen) return out;
  const from = openingOf(protocol, chosen).ids;
  const to = openingOf(protocol, sent).ids;
  from.forEach((raw, i) => {
    const mine = to[i];
    if (mine !== undefined && mine !== raw) out.set(raw, mine);
  });
  return out;
}
