// Which old recording a new one stands for. Recordings pair by tape, then by what they are found
// under (route and request key, then the host they were made for: a tape may hold the same request
// made to two hosts, re-recorded in any order), repeats in recorded order; a new request whose key changed is
// paired with its closest old recording in the same tape and route, as a replay miss names the
// closest recording (src/match/diagnose.ts), and the report says what changed in the request.
// An earlier run's recording that a later record run kept without making its request again
// (kept.ts) pairs with its old recording, and that old recording is also what the request that
// changed into it is compared with (one old recording in two pairs).
// What is left is added (only in the new tapes) or removed (only in the old ones).

import { TapedeckError } from '../errors.ts';
import { closestRecordings, differencesOf, type MissContext } from '../match/diagnose.ts';
import { requestKeys, type Recording, type RequestKeys } from '../match/matcher.ts';
import { isTelemetry, routeEndpoint } from '../providers/index.ts';
import { originKey } from '../store/origins.ts';
import { askedOf, type Asked } from './answer.ts';
import { jsonDiff } from './json-diff.ts';
import { keptCopies, llmConversation, mayReplaceKept, runsOf } from './kept.ts';

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
  /**
   * For a recording on one side only whose request the other side has recordings of too: how
   * many each side has (a request asked more or fewer times, or a record run killed before it
   * replaced the old recordings, which leaves its re-recordings after them).
   */
  repeats?: { old: number; new: number };
  /**
   * The new recording is an earlier run's, carried over by a later record run that did not make
   * its request again (kept.ts); its old recording is paired with it only when no request of
   * that run changed into it.
   */
  kept?: true;
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

/** The closest of `list` to a request, ranked as a miss ranks recordings (diagnose.ts). */
function rankClosest(nk: RequestKeys, list: readonly { c: Recorded; k: RequestKeys }[]): { c: Recorded; k: RequestKeys; shared: number; distance: number } | undefined {
  if (list.length === 0) return undefined;
  const ctx: MissContext = {
    mode: 'exact',
    request: nk,
    recordings: list.map((x) => ({ request: x.c.asked.body, response: undefined, source: `${x.c.tape}#${x.c.index}` }) as Recording),
    keys: list.map((x) => x.k),
    full: (i) => list[i]!.k,
    used: new Uint8Array(list.length),
    allowRepeats: true,
    hasKey: () => false,
    hasSignature: () => false,
  };
  const best = closestRecordings(ctx, 1)[0];
  return best && { ...list[best.index]!, shared: best.sharedMessages, distance: best.signatureDistance };
}

// How many unpaired recordings are ranked for one request at most (the first ones in tape order
// of the group that can hold the closest): the ranking canonicalizes and compares the words of
// whole conversations (~50 µs a recording), and a re-record keeps the order of its requests, so
// the one a request stands for is among the first left. Within this limit the choice is the
// ranking's over every unpaired recording (test/drift/pairing.test.ts).
const RANK_LIMIT = 8;

/**
 * The old recordings of one tape left unpaired by key, indexed so that a request is ranked
 * against few of them: the miss ranking (closestRecordings) puts the recordings that share the
 * longest start of the conversation first, and path hashes chain the whole prefix, so the
 * recordings holding the request's k-th path hash are exactly those sharing its first k+1
 * messages: the deepest such group holds the closest. Where none shares even the first message,
 * those with the same signature and the first ones of the route are ranked.
 */
class Leftovers {
  private readonly byPath = new Map<string, Recorded[]>();
  private readonly bySignature = new Map<string, Recorded[]>();
  private readonly byRoute = new Map<string, Recorded[]>();

  constructor(
    olds: readonly Recorded[],
    private readonly paired: Set<Recorded>,
    private readonly keys: Map<Recorded, RequestKeys | null>,
    // Which new recordings an old one may stand for (all, but for one whose copy was kept).
    private readonly allows: (old: Recorded, n: Recorded) => boolean = () => true,
  ) {
    const push = (m: Map<string, Recorded[]>, k: string, r: Recorded) => {
      const l = m.get(k);
      if (l) l.push(r);
      else m.set(k, [r]);
    };
    for (const o of olds) {
      if (paired.has(o)) continue;
      const route = o.asked.route;
      push(this.byRoute, route, o);
      const k = keysOf(o, keys);
      if (!k) continue;
      for (const ph of new Set(k.pathHashes)) push(this.byPath, `${route}\u0000${ph}`, o);
      push(this.bySignature, `${route}\u0000${k.signatureDigest}`, o);
    }
  }

  /** The first `limit` unpaired ones of a group `n` may pair with, in tape order (paired ones at its front are dropped for good). */
  private unpaired(n: Recorded, list: Recorded[] | undefined, limit = Infinity): Recorded[] {
    if (!list) return [];
    while (list.length && this.paired.has(list[0]!)) list.shift();
    const out: Recorded[] = [];
    for (const r of list) {
      if (out.length >= limit) break;
      if (!this.paired.has(r) && this.allows(r, n)) out.push(r);
    }
    return out;
  }

  private withKeys(list: readonly Recorded[]): { c: Recorded; k: RequestKeys }[] {
    return list.map((c) => ({ c, k: keysOf(c, this.keys)! })).filter((x) => x.k);
  }

  /** The old recording a new one whose key is not among the old ones stands for, and what changed. */
  closest(n: Recorded): { old: Recorded; change: string[] } | undefined {
    const route = n.asked.route;
    const nk = keysOf(n, this.keys);
    if (!nk) {
      // Bodies the matcher does not read: the first left in the route, and the members that differ.
      const old = this.unpaired(n, this.byRoute.get(route)).find((c) => c.asked.match === n.asked.match);
      if (!old) return undefined;
      const diffs = jsonDiff(old.asked.body, n.asked.body);
      const change = diffs.slice(0, 3).map((d) => `request body ${d.path || '(whole)'}: ${d.kind === 'value' ? 'changed' : d.kind}`);
      if (diffs.length > 3) change.push(`and ${diffs.length - 3} more request body changes`);
      return { old, change: change.length ? change : ['request body changed'] };
    }
    let group: Recorded[] = [];
    for (let d = nk.pathHashes.length - 1; d >= 0 && group.length === 0; d--) group = this.unpaired(n, this.byPath.get(`${route}\u0000${nk.pathHashes[d]}`), RANK_LIMIT);
    if (group.length === 0) {
      const same = this.unpaired(n, this.bySignature.get(`${route}\u0000${nk.signatureDigest}`), RANK_LIMIT);
      group = [...new Set([...same, ...this.unpaired(n, this.byRoute.get(route), RANK_LIMIT)])].sort((a, b) => a.index - b.index);
    }
    const best = rankClosest(nk, this.withKeys(group));
    // Only a recording that shares the start of the conversation, or offers the same tools and
    // as many messages (or one off), is the same request changed; anything else is another request.
    if (!best || (best.shared === 0 && best.distance > 1)) return undefined;
    return { old: best.c, change: differencesOf(nk, best.k).map((d) => asChange(d.text)) };
  }
}

/** What a recording is found under: its route, match kind and request key. */
const keyName = (r: Recorded): string => `${r.asked.route}\u0000${r.asked.match}\u0000${r.asked.key}`;

/** The host a recording was made for, as replay compares hosts; '' for one that names none. */
const hostOf = (r: Recorded): string => (r.asked.origin === undefined ? '' : originKey(r.asked.origin));

/** A pair's change of host, worded as a request change (none when either names no host). */
function hostChange(o: Recorded, n: Recorded): string[] {
  const x = o.asked.origin;
  const y = n.asked.origin;
  return x === undefined || y === undefined || hostOf(o) === hostOf(n) ? [] : [`host differs: ${y} vs ${x} before`];
}

/**
 * The old recording of the same key a new one pairs with, from that key's recordings by host:
 * one made for the same host (repeats in recorded order); on the second pass (`anyHost`) one
 * that names no host (it answered any), else one of another host.
 */
function takeOld(hosts: Map<string, Recorded[]> | undefined, n: Recorded, anyHost: boolean): Recorded | undefined {
  if (!hosts) return undefined;
  const own = hosts.get(hostOf(n));
  if (own?.length) return own.shift();
  if (!anyHost) return undefined;
  const none = hosts.get('');
  if (none?.length) return none.shift();
  for (const q of hosts.values()) if (q.length) return q.shift();
  return undefined;
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
    // By key, then by host: one request made to two hosts keeps each host's repeats apart.
    const byKey = new Map<string, Map<string, Recorded[]>>();
    for (const o of olds) {
      const k = keyName(o);
      let hosts = byKey.get(k);
      if (!hosts) byKey.set(k, (hosts = new Map()));
      const h = hostOf(o);
      const q = hosts.get(h);
      if (q) q.push(o);
      else hosts.set(h, [o]);
    }
    // How many recordings of each request (route, match, key) each side has.
    const count = (list: readonly Recorded[]) => {
      const m = new Map<string, number>();
      for (const r of list) m.set(keyName(r), (m.get(keyName(r)) ?? 0) + 1);
      return m;
    };
    const oldCounts = count(olds);
    const newCounts = count(news);
    const repeatsOf = (r: Recorded): { repeats?: { old: number; new: number } } => {
      const o = oldCounts.get(keyName(r)) ?? 0;
      const n = newCounts.get(keyName(r)) ?? 0;
      return o > 0 && n > 0 ? { repeats: { old: o, new: n } } : {};
    };
    // A trace upload (isTelemetry) both sides have, one side more times: how many a run makes
    // follows the uploader's batching timer, so the extra ones are no change of the recordings.
    const isTraceUpload = (r: Recorded) => isTelemetry(routeEndpoint(r.asked.route));
    const paired = new Set<Recorded>();
    const pairs: Pairing[] = [];
    const left: Recorded[] = [];
    // Same key and host first, whatever the order of the new tape; then the same key on another
    // host (a tape recorded before hosts were stored, re-recorded for one).
    const byNew = new Map<Recorded, Recorded>();
    for (const pass of [false, true]) {
      for (const n of news) {
        if (byNew.has(n)) continue;
        const o = takeOld(byKey.get(keyName(n)), n, pass);
        if (o) byNew.set(n, o);
      }
    }
    // A kept copy's old recording waits: a request of the run that kept it may have changed into it.
    const kept = keptCopies(olds, news, byNew, llmConversation((r: Recorded) => keysOf(r, keys)));
    const keptOlds = new Set([...kept].map((n) => byNew.get(n)!));
    for (const n of news) {
      const o = byNew.get(n);
      if (o && !kept.has(n)) {
        paired.add(o);
        pairs.push({ tape: name, old: o, new: n, requestChange: hostChange(o, n) });
      } else if (!o) left.push(n);
    }
    const oldRuns = runsOf(olds);
    const allows = (o: Recorded, n: Recorded) => !keptOlds.has(o) || mayReplaceKept(n, o, oldRuns);
    const leftovers = left.length ? new Leftovers(olds, paired, keys, allows) : undefined;
    for (const n of left) {
      // Another recording of a request the old side has: one more call of it, not another
      // request changed into it (which a leftover of another key would otherwise be taken for).
      const again = repeatsOf(n);
      if (again.repeats) {
        if (!isTraceUpload(n)) pairs.push({ tape: name, new: n, requestChange: [], ...again });
        continue;
      }
      const best = leftovers!.closest(n);
      if (best) {
        paired.add(best.old);
        pairs.push({ tape: name, old: best.old, new: n, requestChange: [...best.change, ...hostChange(best.old, n)] });
      } else pairs.push({ tape: name, new: n, requestChange: [] });
    }
    // Kept copies pair with their old recording, the same bytes on both sides, whether or not a
    // changed request was compared with it too: listed as added, the stale copies read as new
    // requests, and the summary counted a re-record's unchanged leftovers among what it added.
    for (const n of kept) {
      const o = byNew.get(n)!;
      paired.add(o);
      pairs.push({ tape: name, old: o, new: n, requestChange: hostChange(o, n), kept: true });
    }
    for (const o of olds) {
      if (paired.has(o)) continue;
      const again = repeatsOf(o);
      if (!again.repeats || !isTraceUpload(o)) pairs.push({ tape: name, old: o, requestChange: [], ...again });
    }
    // Report order: the new tape's order, removed recordings where they stood in the old one.
    pairs.sort((a, b) => (a.new?.index ?? a.old!.index) - (b.new?.index ?? b.old!.index) || (a.new ? 0 : 1) - (b.new ? 0 : 1));
    out.push(...pairs);
  }
  return out;
}
