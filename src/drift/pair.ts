// Which old recording a new one stands for. Recordings pair by tape, then by what they are found
// under (route and request key), repeats in recorded order; a new request whose key changed is
// paired with its closest old recording in the same tape and route, as a replay miss names the
// closest recording (src/match/diagnose.ts), and the report says what changed in the request.
// What is left is added (only in the new tapes) or removed (only in the old ones).

import { TapedeckError } from '../errors.ts';
import { closestRecordings, differencesOf, type MissContext } from '../match/diagnose.ts';
import { requestKeys, type Recording, type RequestKeys } from '../match/matcher.ts';
import { askedOf, type Asked } from './answer.ts';
import { jsonDiff } from './json-diff.ts';

/** A tape's recordings, as read from a file, a folder or git. */
export interface TapeSide {
  /** The tape's name, the same on both sides (its path relative to the folder compared). */
  name: string;
  /** The decoded tape values, in tape order. */
  records: readonly unknown[];
}

/** One recording on one side. */
export interface Recorded {
  tape: string;
  /** Position among the tape's records. */
  index: number;
  record: unknown;
  asked: Asked;
}

/** An old and a new recording of (nearly) the same request, or one side alone. */
export interface Pairing {
  tape: string;
  old?: Recorded;
  new?: Recorded;
  /** For a pair whose request key changed: what changed, worded (empty when the key is the same). */
  requestChange: string[];
}

function recordedOf(side: TapeSide): Recorded[] {
  const out: Recorded[] = [];
  side.records.forEach((record, index) => {
    const asked = askedOf(record);
    if (asked) out.push({ tape: side.name, index, record, asked });
  });
  return out;
}

/** Keys of an LLM request, or undefined for a body the matcher does not read. */
function keysOf(r: Recorded, cache: Map<Recorded, RequestKeys | null>): RequestKeys | undefined {
  let k = cache.get(r);
  if (k === undefined) {
    k = null;
    if (r.asked.match === 'llm' || r.asked.match === 'cache') {
      try {
        k = requestKeys(r.asked.body);
      } catch (e) {
        if (!(e instanceof TapedeckError)) throw e;
      }
    }
    cache.set(r, k);
  }
  return k ?? undefined;
}

// The miss report speaks of "the closest recording"; here the other side is the old recording.
const asChange = (text: string) => text.replace(/ in the closest recording/g, ' before').replace(/ from the closest recording/g, '').replace(/the closest recording/g, 'the old recording');

function closestOld(n: Recorded, candidates: Recorded[], keys: Map<Recorded, RequestKeys | null>): { old: Recorded; change: string[] } | undefined {
  const nk = keysOf(n, keys);
  if (nk) {
    const withKeys = candidates.map((c) => ({ c, k: keysOf(c, keys) })).filter((x): x is { c: Recorded; k: RequestKeys } => x.k !== undefined);
    if (withKeys.length === 0) return undefined;
    const ctx: MissContext = {
      mode: 'exact',
      request: nk,
      recordings: withKeys.map((x) => ({ request: x.c.asked.body, response: undefined, source: `${x.c.tape}#${x.c.index}` }) as Recording),
      keys: withKeys.map((x) => x.k),
      full: (i) => withKeys[i]!.k,
      used: new Uint8Array(withKeys.length),
      allowRepeats: true,
      hasKey: () => false,
      hasSignature: () => false,
    };
    const best = closestRecordings(ctx, 1)[0];
    // Only a recording that shares the start of the conversation, or offers the same tools and
    // as many messages, is the same request changed; anything else is a different request.
    if (!best || (best.sharedMessages === 0 && best.signatureDistance > 1)) return undefined;
    const old = withKeys[best.index]!;
    return { old: old.c, change: differencesOf(nk, old.k).map((d) => asChange(d.text)) };
  }
  // Bodies the matcher does not read: the first left in the same route, and the members that differ.
  const old = candidates.find((c) => c.asked.match === n.asked.match);
  if (!old) return undefined;
  const diffs = jsonDiff(old.asked.body, n.asked.body);
  const change = diffs.slice(0, 3).map((d) => `request body ${d.path || '(whole)'}: ${d.kind === 'value' ? 'changed' : d.kind}`);
  if (diffs.length > 3) change.push(`and ${diffs.length - 3} more request body changes`);
  return { old, change: change.length ? change : ['request body changed'] };
}

/**
 * Pairs the recordings of the old and the new tapes (tapes matched by name).
 *
 * @example
 * pairRecordings([{ name: 'chat.tape', records: before }], [{ name: 'chat.tape', records: after }])
 */
export function pairRecordings(oldTapes: readonly TapeSide[], newTapes: readonly TapeSide[]): Pairing[] {
  const names = [...new Set([...oldTapes.map((t) => t.name), ...newTapes.map((t) => t.name)])].sort();
  const out: Pairing[] = [];
  const keys = new Map<Recorded, RequestKeys | null>();
  for (const name of names) {
    const olds = oldTapes.filter((t) => t.name === name).flatMap(recordedOf);
    const news = newTapes.filter((t) => t.name === name).flatMap(recordedOf);
    const byKey = new Map<string, Recorded[]>();
    for (const o of olds) {
      const k = `${o.asked.route}\u0000${o.asked.match}\u0000${o.asked.key}`;
      const q = byKey.get(k);
      if (q) q.push(o);
      else byKey.set(k, [o]);
    }
    const paired = new Set<Recorded>();
    const pairs: Pairing[] = [];
    const left: Recorded[] = [];
    for (const n of news) {
      const q = byKey.get(`${n.asked.route}\u0000${n.asked.match}\u0000${n.asked.key}`);
      const o = q?.shift();
      if (o) {
        paired.add(o);
        pairs.push({ tape: name, old: o, new: n, requestChange: [] });
      } else left.push(n);
    }
    for (const n of left) {
      const candidates = olds.filter((o) => !paired.has(o) && o.asked.route === n.asked.route);
      const best = candidates.length ? closestOld(n, candidates, keys) : undefined;
      if (best) {
        paired.add(best.old);
        pairs.push({ tape: name, old: best.old, new: n, requestChange: best.change });
      } else pairs.push({ tape: name, new: n, requestChange: [] });
    }
    for (const o of olds) if (!paired.has(o)) pairs.push({ tape: name, old: o, requestChange: [] });
    // Report order: the new tape's order, removed recordings where they stood in the old one.
    pairs.sort((a, b) => (a.new?.index ?? a.old!.index) - (b.new?.index ?? b.old!.index) || (a.new ? 0 : 1) - (b.new ? 0 : 1));
    out.push(...pairs);
  }
  return out;
}
