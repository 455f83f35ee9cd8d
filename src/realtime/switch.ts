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
 *   client knows, as a replay gives a client's own item ids back).
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
  // audio under way sent so far. Numbered alike in both, group by group.
  const ia = new Ids();
  const ib = new Ids();
  const groups: [ServerFrame[], ServerFrame[]][] = [[a.prelude, b.prelude]];
  for (let k = 0; k < p.step; k++) groups.push([a.steps[k]!.server, b.steps[k]!.server]);
  if (p.offset > 0) groups.push([a.steps[p.step]!.server.slice(0, p.sent), b.steps[p.step]!.server.slice(0, p.sent)]);
  for (const [fa, fb] of groups) {
    if (fa.length !== fb.length) return 'server';
    for (let i = 0; i < fa.length; i++) if (hashValue(serverShape(protocol, fa[i]!, ia.id)) !== hashValue(serverShape(protocol, fb[i]!, ib.id))) return 'server';
  }
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
  for (let i = 0; i < ib.raws.length; i++) if (!assign(ib.raws[i]!, known(ia.raws[i]!))) return 'ids';
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
  return { swap, recordedIds };
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
