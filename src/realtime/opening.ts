/**
 * A session's opening: the server frames it sent before the client's first frame (OpenAI's
 * `session.created`). Replay sends the opening of a session at connect, before the client's
 * first frame can choose which session the connect gets; it may then choose another session
 * of the connect only if that one opened the same way, so that what the client saw holds.
 *
 * Two openings are the same when they differ only in what changes on every run: the ids the
 * server made up (`session.id`, renumbered by first use, as the provider's keys of client frames
 * renumber ids; `event_id` left out, as there), and times (members ending in `_at`, such as
 * `expires_at`: OpenAI names its Unix times that way). The chosen session's ids are then given
 * back to the client as the ones it was sent (`openingIds`), as a replay gives a client's own
 * item ids back.
 */
import { hashValue } from '../core/index.ts';
import type { RealtimeProtocol } from '../providers/realtime.ts';
import type { RealtimeFrame } from '../store/records.ts';
import type { LoadedSession } from './tape.ts';

type ServerFrame = Exclude<RealtimeFrame, { c: 1 }>;

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
 * What an opening frame is compared by, the ids it holds given to `id` in order; a frame that
 * is not JSON text by its bytes (audio by its digest).
 */
function shape(protocol: RealtimeProtocol, f: ServerFrame, id: (raw: string) => string): unknown {
  if ('blob' in f) return { blob: f.blob };
  // Audio in the text is a blob reference already (`tapedeck-blob:<sha256>`): compared as text.
  let msg: unknown;
  try {
    msg = JSON.parse(f.text);
  } catch {
    return { text: f.text };
  }
  return timeless(protocol.frameKey(msg, id));
}

/** Ids renumbered by first use (`#1`, `#2`...), the raw ones kept in order. */
function numbering(): { id: (raw: string) => string; raws: string[] } {
  const map = new Map<string, string>();
  const raws: string[] = [];
  return {
    raws,
    id: (raw) => {
      let v = map.get(raw);
      if (v === undefined) {
        v = `#${map.size + 1}`;
        map.set(raw, v);
        raws.push(raw);
      }
      return v;
    },
  };
}

/** Openings worked out so far (a loaded session is read-only, and of one protocol: its connect key names it). */
const known = new WeakMap<LoadedSession, { key: string; ids: string[] }>();

/** The compared shape of a session's opening, and the raw ids it holds in order of first use. */
function openingOf(protocol: RealtimeProtocol, s: LoadedSession): { key: string; ids: string[] } {
  let o = known.get(s);
  if (!o) {
    const n = numbering();
    const shapes = opening(s).map((f) => shape(protocol, f, n.id));
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
