/**
 * A replay whose client frame differs from its session, going on with another recorded session
 * of the connect. Sessions that start alike (every session of one voice agent sends the same
 * `session.update` or `setup`) go to connects in connect order, at the first frame; they differ
 * later, where the user said something else. A connect that got Alpha's session but says "Beta"
 * at its second frame is not a miss while Beta's session is on the tape: it goes on with that
 * one, as long as all the client saw holds (docs/realtime.md, "How replay works"):
 *
 * - the other session has the client's frames so far, keyed as any client frame is, and takes
 *   the frame that differed;
 * - the server frames sent so far are the same in it, up to the server's ids and times (as two
 *   openings are compared: src/realtime/opening.ts), and the ids the client was sent or sent
 *   itself map one to one onto the other session's (its ids are then given as the ones the
 *   client knows, as a replay gives a client's own item ids back). They are compared as what
 *   the server said, not client frame by client frame: where a server frame falls among the
 *   client's frames and the frames of a response streaming meanwhile is timing (a
 *   `session.updated` answered in 0 ms comes before the client's next frame, one answered in
 *   60 ms in the middle of the response that frame asked for), not what the server said. Each
 *   frame the client was sent must be one of the other session's, in the order the client got
 *   them where they are alike; one the other session's server sent later (`ahead`) is not sent
 *   again when the replay gets there, and those it sent before this point that the client was
 *   not sent (`owed`) go out first, provided this session's server sent them too (later).
 *
 * The session goes on with, in this order: one not replayed yet; else one another replay has
 * now that can take this one's in exchange (two connects at the same time that started alike,
 * Beta's connect first); else, past the last (not with --strict-order), one replayed already.
 * Otherwise it is a miss, which names a session that has the client's frames but cannot take
 * over, and why, in place of how to re-record.
 */
import { hashValue } from '../core/index.ts';
import type { RealtimeProtocol } from '../providers/realtime.ts';
import { Ids } from './ids.ts';
import type { Lineup, Occupant, Place } from './lineup.ts';
import { serverShape, type ServerFrame } from './opening.ts';
import { sessionSteps } from './steps.ts';
import type { LoadedSession } from './tape.ts';


/** How far a replay has gone in its session (ReplaySession's state). */
export interface Progress {
  /** Steps done: client frames matched, each with the server frames that followed it sent. */
  step: number;
  /** Of the step under way, when it is audio: bytes matched so far, and its server frames sent. */
  offset: number;
  sent: number;
  /**
   * Server frames of the session past that point (in its later steps) the client was sent
   * already, by their index among the session's server frames: a session taken over whose
   * server sent them later than the one before it (see fit). None when absent.
   */
  ahead?: readonly number[];
  /** Ids the client knows in place of the session's own (recorded raw -> the client's). */
  swap: ReadonlyMap<string, string> | undefined;
  /** The client's own id numbered `#n` (its frames renumbered as the keys are). */
  mine(n: string): string | undefined;
}

/** What the client sent that the session did not have: a frame's key, or audio bytes. */
export type Sent = { key: string } | { stream: string; bytes: Uint8Array };

/** How a replay goes on with another session. */
export interface Takeover {
  /** The other session's ids -> the ones the client knows. */
  swap: Map<string, string>;
  /** The other session's recorded client ids, numbered as the replay's learnIds goes on numbering them. */
  recordedIds: Ids;
  /** Server frames of the other session past the replay's point the client was sent already (not sent again), by index among its server frames. */
  ahead: number[];
  /** Server frames of the other session before the replay's point the client was not sent yet (sent first), by index. */
  owed: number[];
}

/** Why a session cannot take over: its client frames differ, its server frames differ, or the ids do not map. */
export type Unfit = 'client' | 'server' | 'ids';

const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

/**
 * Whether a replay at `p` in `from` could go on in `to`, after `sent` (the data `from` did not
 * have; none for a replay asked to trade places): the takeover, or why not.
 *
 * @example
 * fit(openai, (d) => tape.blob(d), alpha, beta, progress, { key }) // { swap, recordedIds } or 'client'
 */
export function fit(protocol: RealtimeProtocol, blob: (digest: string) => Uint8Array, from: LoadedSession, to: LoadedSession, p: Progress, sent?: Sent): Takeover | Unfit {
  const a = sessionSteps(from);
  const b = sessionSteps(to);
  const under = p.offset > 0 || sent !== undefined;
  if (b.steps.length < p.step + (under ? 1 : 0)) return 'client';
  for (let k = 0; k < p.step; k++) if (b.steps[k]!.client.key !== a.steps[k]!.client.key) return 'client';
  const mineNow = a.steps[p.step]?.client;
  const theirs = b.steps[p.step]?.client;
  if (p.offset > 0) {
    // Audio under way: the other run starts with the bytes the client sent of this one.
    if (!mineNow || !('audio' in mineNow) || !theirs || !('audio' in theirs) || theirs.audio.stream !== mineNow.audio.stream || theirs.audio.bytes <= p.offset) return 'client';
    if (!same(blob(theirs.audio.blob).subarray(0, p.offset), blob(mineNow.audio.blob).subarray(0, p.offset))) return 'client';
  }
  if (sent && 'key' in sent) {
    // A frame after audio that ended early is not taken over: the other run would have to end there too.
    if (p.offset > 0 || theirs?.key !== sent.key) return 'client';
  } else if (sent) {
    if (!theirs || !('audio' in theirs) || theirs.audio.stream !== sent.stream) return 'client';
    const rec = blob(theirs.audio.blob);
    const n = Math.min(sent.bytes.length, rec.length - p.offset);
    if (n <= 0 || !same(rec.subarray(p.offset, p.offset + n), sent.bytes.subarray(0, n))) return 'client';
  }
  // The server frames the client was sent: the opening, those of each step done, those of the
  // step under way sent so far, and any sent ahead of it; each found among the other session's
  // (the first alike not taken yet), ids numbered by first use on both sides.
  const fa = serverSequence(from);
  const fb = serverSequence(to);
  const boundary = fa.at(p.step, p.sent);
  const aheadA = p.ahead ?? [];
  const seen = [...fa.frames.slice(0, boundary), ...aheadA.map((i) => fa.frames[i]!)];
  // How far the other session's server had gone when its client sent the frame at this point.
  const reached = fb.at(p.step, p.sent);
  const na = new Numbering(protocol);
  const nb = new Numbering(protocol);
  const taken = new Set<number>();
  let low = 0;
  const find = (x: ServerFrame, among: readonly ServerFrame[], from: number, skip: Set<number>, xs: Numbering, ys: Numbering): number => {
    const tx = xs.trial(x);
    for (let j = from; j < among.length; j++) {
      if (skip.has(j) || rough(protocol, among[j]!) !== tx.rough) continue;
      const ty = ys.trial(among[j]!);
      if (ty.shape !== tx.shape) continue;
      xs.commit(tx.added);
      ys.commit(ty.added);
      skip.add(j);
      return j;
    }
    return -1;
  };
  for (const x of seen) {
    if (find(x, fb.frames, low, taken, na, nb) < 0) return 'server';
    while (taken.has(low)) low++;
  }
  const seenIds = nb.raws.length;
  const ahead = [...taken].filter((j) => j >= reached).sort((x, y) => x - y);
  const owed: number[] = [];
  for (let j = 0; j < reached; j++) if (!taken.has(j)) owed.push(j);
  // Audio under way: its server frames go out by the bytes the client sent (their `at`), so
  // there the two must stand at the same frame.
  if (p.offset > 0 && (ahead.length > 0 || owed.length > 0)) return 'server';
  // The frames the client is owed must be ones this session's server sent too, after what the
  // client was sent: else the two sessions' servers said different things.
  const unseen = new Set<number>(aheadA);
  for (let i = 0; i < boundary; i++) unseen.add(i);
  for (const j of owed) if (find(fb.frames[j]!, fa.frames, boundary, unseen, nb, na) < 0) return 'server';
  // Each id of the other session goes to the one the client knows in its place, one to one.
  // Where the client echoed an id (a call id in a tool's output) that the other session holds
  // otherwise than its server frames gave it, or two of its ids would become one, the rest of
  // the session could name what the client never saw: a miss, rather than a wrong answer.
  const onto = new Map<string, string>();
  const back = new Map<string, string>();
  const assign = (raw: string, known: string): boolean => {
    if ((onto.get(raw) ?? known) !== known || (back.get(known) ?? raw) !== raw) return false;
    onto.set(raw, known);
    back.set(known, raw);
    return true;
  };
  const known = (raw: string) => p.swap?.get(raw) ?? raw;
  // Only the ids of frames the client was sent: those of frames it is owed are new to it.
  for (let i = 0; i < seenIds; i++) if (!assign(nb.raws[i]!, known(na.raws[i]!))) return 'ids';
  const recordedIds = new Ids();
  let sound = true;
  for (let k = 0; k < p.step; k++) {
    const c = b.steps[k]!.client;
    if (!('msg' in c)) continue;
    protocol.frameKey(c.msg, (raw) => {
      const n = recordedIds.id(raw);
      const mine = p.mine(n);
      if (mine === undefined || !assign(raw, mine)) sound = false;
      return n;
    });
  }
  if (!sound) return 'ids';
  const swap = new Map<string, string>();
  for (const [raw, k] of onto) if (raw !== k) swap.set(raw, k);
  return { swap, recordedIds, ahead, owed };
}

/**
 * The index of server frame `i` of step `step` of `s` among all its server frames (as
 * Takeover's `ahead` and `owed` count them).
 *
 * @example
 * serverIndex(session, 2, 0) // the first server frame after the client's third frame
 */
export function serverIndex(s: LoadedSession, step: number, i: number): number {
  return serverSequence(s).at(step, i);
}

/** A frame's shape with every id alike: frames that cannot match are passed over without numbering ids. */
const roughs = new WeakMap<ServerFrame, string>();
function rough(protocol: RealtimeProtocol, f: ServerFrame): string {
  let r = roughs.get(f);
  if (r === undefined) roughs.set(f, (r = hashValue(serverShape(protocol, f, () => '#'))));
  return r;
}

/**
 * Ids numbered by first use (as Ids), where a frame's numbering is tried first and kept only if
 * the frame matched (frames are looked for out of order).
 */
class Numbering {
  private readonly map = new Map<string, string>();
  readonly raws: string[] = [];
  constructor(private readonly protocol: RealtimeProtocol) {}

  /** The frame's compared shape with its new ids numbered after the known ones, and those ids in order. */
  trial(f: ServerFrame): { shape: string; rough: string; added: string[] } {
    const added: string[] = [];
    const local = new Map<string, string>();
    const id = (raw: string): string => {
      const known = this.map.get(raw) ?? local.get(raw);
      if (known !== undefined) return known;
      const n = `#${this.map.size + local.size + 1}`;
      local.set(raw, n);
      added.push(raw);
      return n;
    };
    return { shape: hashValue(serverShape(this.protocol, f, id)), rough: rough(this.protocol, f), added };
  }

  commit(added: readonly string[]): void {
    for (const raw of added) {
      this.map.set(raw, `#${this.map.size + 1}`);
      this.raws.push(raw);
    }
  }
}

/** A session's server frames in order, whatever client frames came between them, and where each step's begin. */
interface ServerSequence {
  frames: ServerFrame[];
  /** Index in `frames` of server frame `sent` of step `step` (past the last step: the end). */
  at(step: number, sent: number): number;
}

const sequences = new WeakMap<LoadedSession, ServerSequence>();

/** The server frames of `s` as one sequence (kept for the session's life, as its steps are). */
function serverSequence(s: LoadedSession): ServerSequence {
  let q = sequences.get(s);
  if (!q) {
    const { prelude, steps } = sessionSteps(s);
    const frames = [...prelude];
    const starts: number[] = [];
    for (const st of steps) {
      starts.push(frames.length);
      for (const f of st.server) frames.push(f);
    }
    q = { frames, at: (step, sent) => (starts[step] ?? frames.length) + sent };
    sequences.set(s, q);
  }
  return q;
}

/** A replay that may go on with another session: what the search asks of it. */
export interface Switching {
  /** The replay, as the lineup knows it on its place. */
  readonly occupant: Occupant;
  /** The session it replays now, and its place (both change if another replay trades with it meanwhile). */
  current(): LoadedSession;
  index(): number | undefined;
  /** Whether `to` can take over from the replay's session after what the client sent. */
  fits(to: LoadedSession): Takeover | Unfit;
  /** Goes on with `to` at place `index` (undefined: a session replayed again, holding no place). */
  adopt(to: LoadedSession, index: number | undefined, t: Takeover): void;
  /** Whether the replay still has a client to go on for. */
  alive(): boolean;
}

/** What a replay whose frame differs from its session did: went on with another, or misses (with a note naming a session the tape has). */
export type Outcome = { moved: true } | { moved: false; note?: string };

/**
 * Moves a replay to the session it goes on with, as the file's comment says, or gives the
 * miss's note. `frames`: the client frames so far, for the note. The choice and the move are
 * made at once after the tape is read, so two replays looking at the same time never both take
 * one session.
 *
 * @example
 * const o = await takeOver(lineup, replay, { strictOrder, label, frames: 2 })
 * if (!o.moved) miss(o.note)
 */
export async function takeOver(lineup: Lineup, me: Switching, how: { strictOrder: boolean; label: string; frames: number }): Promise<Outcome> {
  await lineup.readAll();
  if (!me.alive()) return { moved: false };
  // A replay looking at the same time traded sessions with this one, whose new one takes the
  // frame: it goes on with that (two parallel connects that each got the other's session).
  if (typeof me.fits(me.current()) === 'object') return { moved: true };
  const index = me.index();
  const go = decide(lineup, me, index, lineup.places(), how);
  if ('note' in go) return { moved: false, note: go.note };
  go.apply();
  return { moved: true };
}

/** The move takeOver makes, or the miss's note. */
function decide(lineup: Lineup, me: Switching, index: number | undefined, all: Place[], how: { strictOrder: boolean; label: string; frames: number }): { apply: () => void } | { note: string | undefined } {
  const places = all.filter((p) => p.index !== index);
  const fits = new Map(places.map((p) => [p.index, me.fits(p.session)] as const));
  const ok = (i: number): Takeover | undefined => {
    const f = fits.get(i);
    return typeof f === 'object' ? f : undefined;
  };
  // Not replayed yet, places no waiting connect holds first (as Lineup.choose passes them over).
  for (const held of [false, true]) {
    for (const p of places) {
      const t = ok(p.index);
      if (p.served || p.held !== held || !t) continue;
      return {
        apply: () => {
          lineup.move(me.occupant, index, p.index);
          me.adopt(p.session, p.index, t);
        },
      };
    }
  }
  // Replayed now by a connect that can go on with this replay's session in exchange.
  if (index !== undefined) {
    for (const p of places) {
      const t = ok(p.index);
      const theirs = t && p.served && p.occupant && p.occupant !== me.occupant ? p.occupant.movable(me.current(), index) : undefined;
      if (!t || !theirs) continue;
      return {
        apply: () => {
          theirs();
          lineup.trade(index, p.index);
          me.adopt(p.session, p.index, t);
        },
      };
    }
  }
  // Past the last: the last session with these frames again, unless each replays once.
  const again = how.strictOrder ? undefined : places.filter((p) => p.served && ok(p.index)).at(-1);
  if (again) {
    const t = ok(again.index)!;
    return {
      apply: () => {
        if (index !== undefined) lineup.putBack(index, me.occupant);
        me.adopt(again.session, undefined, t);
      },
    };
  }
  return { note: noteFor(places, fits, index, how) };
}

/** What a miss says of the first session that has the client's frames but could not take over. */
function noteFor(places: { index: number; served: boolean; occupant: Occupant | undefined }[], fits: Map<number, Takeover | Unfit>, index: number | undefined, how: { strictOrder: boolean; label: string; frames: number }): string | undefined {
  const p = places.find((x) => fits.get(x.index) !== 'client');
  if (!p) return undefined;
  const f = fits.get(p.index);
  const which = `session ${p.index + 1} of ${how.label} was recorded with the client's ${how.frames} frame${how.frames === 1 ? '' : 's'} so far`;
  const later = !p.served && index !== undefined && p.index > index ? ', later in connect order,' : '';
  if (!p.served && f === 'server') return `${which}${later} but its server frames before them differ from the ones this connect was sent (beyond ids and times): connect the sessions in the order recorded`;
  if (!p.served) return `${which}${later} but the ids this connect was sent or sent itself do not map onto its own, so it cannot take over in the middle of the session: connect the sessions in the order recorded`;
  if (p.occupant) return `${which}; another connect is replaying it now (sessions that start alike replay in connect order: connect them in the order recorded)`;
  return `${which}; it was replayed already${how.strictOrder ? ' (with --strict-order each recorded session replays once)' : ''}`;
}
