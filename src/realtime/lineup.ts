/**
 * The recorded sessions of one connect key, in recorded order, as replay hands them out: which
 * were served, and which are held by a connect that got a session's opening frames but has not
 * sent its first frame yet (OpenAI's `session.created` goes out at connect; the session is
 * chosen at the first client frame). Reading the tape is the caller's (`read`); this file only
 * decides which session goes to which connect.
 *
 * The rules, in docs/realtime.md ("How replay works"):
 * - in order (`next`, `reserve`): the first session neither served nor held;
 * - by first frame (`choose`): the first session not served whose first client frame keys as
 *   the connect's and that no other waiting connect holds; failing that, one another waiting
 *   connect holds (that connect then finds another at its own first frame). So sessions that
 *   start alike go in connect order however their first frames race, and sessions that start
 *   differently go to the connect that sends their frame;
 * - a replay that misses puts its session back (`putBack`): a miss uses up no recording; one
 *   that goes on with another session (src/realtime/switch.ts) moves to its place (`move`), or
 *   trades places with the replay that has it (`trade`).
 */
import type { LoadedSession } from './tape.ts';

/** A recorded session of the key, or the error its damaged head gave (the connect that gets it misses with it). */
export type Slot = { session: LoadedSession } | { damaged: Error };

/** A connect's hold on the session whose opening it was sent, until its first frame chooses. */
export interface Ticket {
  /** The session the connect was sent the opening of. */
  readonly session: LoadedSession;
  /** Its place in the lineup; undefined for the last session served again (past the last). */
  readonly index: number | undefined;
}

/**
 * A replay on a place of the lineup (src/realtime/session.ts), as a replay that would trade
 * places with it asks it.
 */
export interface Occupant {
  /**
   * How this replay would go on with `session` (at place `index`) in place of its own: call the
   * result to do it. Undefined when it cannot now (what it was sent or sent differs, or it is
   * choosing or switching itself).
   */
  movable(session: LoadedSession, index: number): (() => void) | undefined;
}

/** A place of the lineup as a replay looking for another session sees it. */
export interface Place {
  index: number;
  session: LoadedSession;
  served: boolean;
  /** A connect that was sent its opening waits for its first frame. */
  held: boolean;
  /** The replay on it now, if one is (a served place without one was replayed to its end). */
  occupant: Occupant | undefined;
}

/** The key of a session's first client frame, or undefined when it has none. */
const firstKey = (s: LoadedSession): string | undefined => {
  for (const f of s.frames) if ('c' in f) return f.key;
  return undefined;
};

/**
 * @example
 * const lineup = new Lineup(() => readNextSessionOf(key))
 * const t = await lineup.reserve()                       // at connect: t.session's opening is sent
 * const got = await lineup.choose(frameKey, () => true, t) // at its first frame
 */
export class Lineup {
  private readonly slots: Slot[] = [];
  private readonly served: boolean[] = [];
  /** The ticket holding each place, while its connect waits for its first frame. */
  private readonly holders: (Ticket | undefined)[] = [];
  /** The replay on each served place while it goes on (see Occupant). */
  private readonly occupants: (Occupant | undefined)[] = [];

  /** `read` gives the key's next recorded session (or its damage), undefined past the last. */
  constructor(private readonly read: () => Promise<Slot | undefined>) {}

  /**
   * Slot `i`, read on as far as needed; undefined past the last. A damaged read ends the scan
   * that asked for it (`scan.ended`): a damage past the last recording repeats on every read.
   */
  private async slot(i: number, scan: { ended: boolean }): Promise<Slot | undefined> {
    while (i >= this.slots.length && !scan.ended) {
      const s = await this.read();
      if (!s) {
        scan.ended = true;
        break;
      }
      this.slots.push(s);
      this.served.push(false);
      this.holders.push(undefined);
      this.occupants.push(undefined);
      if ('damaged' in s) scan.ended = true;
    }
    return this.slots[i];
  }

  /** The first place neither served nor held, read on as needed. */
  private async free(): Promise<number | undefined> {
    const scan = { ended: false };
    for (let i = 0; ; i++) {
      const s = await this.slot(i, scan);
      if (!s) return undefined;
      if (!this.served[i] && !this.holders[i]) return i;
    }
  }

  /** A damaged place handed to a connect: used up (the next connect gets the next one), its error thrown. */
  private damaged(i: number): never {
    this.served[i] = true;
    throw (this.slots[i] as { damaged: Error }).damaged;
  }

  /**
   * The next session in recorded order (neither served nor held), marked served; undefined past
   * the last. A damaged one throws its error, for this connect only.
   *
   * @example
   * await lineup.next() // first session; await lineup.next() // second; ...
   */
  async next(): Promise<LoadedSession | undefined> {
    return (await this.nextPlace())?.session;
  }

  /**
   * next(), with the session's place (for a replay that may give it back or move).
   *
   * @example
   * const got = await lineup.nextPlace() // { session, index: 0 }
   */
  async nextPlace(): Promise<{ session: LoadedSession; index: number } | undefined> {
    const i = await this.free();
    if (i === undefined) return undefined;
    const s = this.slots[i]!;
    if ('damaged' in s) this.damaged(i);
    this.served[i] = true;
    return { session: s.session, index: i };
  }

  /**
   * Holds the next session in recorded order for a connect whose first frame will choose
   * (choose() with the ticket); undefined past the last. A damaged one throws, used up.
   *
   * @example
   * const t = await lineup.reserve() // t.session: the session whose opening the connect is sent
   */
  async reserve(): Promise<Ticket | undefined> {
    const i = await this.free();
    if (i === undefined) return undefined;
    const s = this.slots[i]!;
    if ('damaged' in s) this.damaged(i);
    const t: Ticket = { session: s.session, index: i };
    this.holders[i] = t;
    return t;
  }

  /**
   * A ticket for a session served again past the last one: it holds no place.
   *
   * @example
   * const t = (await lineup.reserve()) ?? lineup.again(lastSession)
   */
  again(session: LoadedSession): Ticket {
    return { session, index: undefined };
  }

  /**
   * The ticket's session taken as it is (its connect's first frame cannot choose: audio, binary;
   * or the session has no client frame to wait for), in order. Returns it, or, when another
   * connect's frame took it meanwhile, the next session in order (the ticket's again past the
   * last, holding no place: index undefined).
   *
   * @example
   * const { session, index } = await lineup.take(ticket)
   */
  async take(t: Ticket): Promise<{ session: LoadedSession; index: number | undefined }> {
    const i = t.index;
    if (i !== undefined && this.holders[i] === t) {
      this.holders[i] = undefined;
      this.served[i] = true;
      return { session: t.session, index: i };
    }
    return (await this.nextPlace()) ?? { session: t.session, index: undefined };
  }

  /**
   * Gives a ticket's place back: its connect left, or missed, before its first frame chose.
   *
   * @example
   * client.once('close', () => lineup.release(ticket))
   */
  release(t: Ticket): void {
    if (t.index !== undefined && this.holders[t.index] === t) this.holders[t.index] = undefined;
  }

  /**
   * The session for a connect whose first client frame keys as `first`, among those `fits`
   * accepts (for OpenAI: the ones whose opening was the same as the one the connect was sent):
   * marked served, the ticket's place given back. Undefined when none not served has that
   * first frame (nothing is used up; the ticket keeps its place until released).
   *
   * @example
   * await lineup.choose(key, (s) => sameOpening(protocol, ticket.session, s), ticket) // { session, index }
   */
  async choose(first: string, fits: (s: LoadedSession) => boolean, t?: Ticket): Promise<{ session: LoadedSession; index: number } | undefined> {
    const opens = (i: number): boolean => {
      const s = this.slots[i];
      return s !== undefined && 'session' in s && !this.served[i] && firstKey(s.session) === first && fits(s.session);
    };
    const taken = (i: number) => {
      if (t) this.release(t);
      // Taken from another waiting connect: that one looks again at its own first frame.
      this.holders[i] = undefined;
      this.served[i] = true;
      return { session: (this.slots[i] as { session: LoadedSession }).session, index: i };
    };
    // In recorded order, passing over the places other waiting connects hold: of sessions that
    // start alike, each connect gets the one of its own place or an earlier one no waiting
    // connect holds, so they go in connect order however the first frames race.
    const scan = { ended: false };
    for (let i = 0; await this.slot(i, scan); i++) if (opens(i) && (this.holders[i] === undefined || this.holders[i] === t)) return taken(i);
    for (let i = 0; i < this.slots.length; i++) if (opens(i)) return taken(i);
    return undefined;
  }

  /**
   * The replay on a served place, while it goes on (a replay that may trade places with another).
   *
   * @example
   * lineup.occupy(index, replay)
   */
  occupy(index: number, o: Occupant): void {
    if (this.served[index]) this.occupants[index] = o;
  }

  /**
   * The replay on a place ended (its client closed): the place stays served, with no one on it.
   *
   * @example
   * client.once('close', () => lineup.leave(index, replay))
   */
  leave(index: number, o: Occupant): void {
    if (this.occupants[index] === o) this.occupants[index] = undefined;
  }

  /**
   * The replay on a place missed: its session goes back, for a later connect to have (a miss
   * uses up no recording, as an HTTP miss uses up none).
   *
   * @example
   * lineup.putBack(index, replay) // the next connect whose frames fit gets it
   */
  putBack(index: number, o: Occupant): void {
    if (this.occupants[index] !== o) return;
    this.occupants[index] = undefined;
    this.served[index] = false;
  }

  /**
   * A replay goes on with the session at place `to` (not served) in place of its own at `from`
   * (undefined: it held none), which goes back. A connect waiting on `to` looks again at its
   * own first frame, as when choose() takes a held place.
   *
   * @example
   * lineup.move(replay, 0, 1)
   */
  move(o: Occupant, from: number | undefined, to: number): void {
    if (from !== undefined) this.putBack(from, o);
    this.holders[to] = undefined;
    this.served[to] = true;
    this.occupants[to] = o;
  }

  /**
   * Two replays on served places trade them (each goes on with the other's session).
   *
   * @example
   * lineup.trade(0, 1)
   */
  trade(a: number, b: number): void {
    [this.occupants[a], this.occupants[b]] = [this.occupants[b], this.occupants[a]];
  }

  /**
   * Reads the key's sessions to the last (up to a damaged one), for places().
   *
   * @example
   * await lineup.readAll(); lineup.places()
   */
  async readAll(): Promise<void> {
    const scan = { ended: false };
    for (let i = 0; await this.slot(i, scan); i++);
  }

  /**
   * The sessions read so far (a damaged one left out), with who has each, as they are now.
   *
   * @example
   * lineup.places().filter((p) => !p.served)
   */
  places(): Place[] {
    const out: Place[] = [];
    this.slots.forEach((s, index) => {
      if ('session' in s) out.push({ index, session: s.session, served: this.served[index]!, held: this.holders[index] !== undefined, occupant: this.occupants[index] });
    });
    return out;
  }

  /**
   * Sessions read so far whose first client frame keys as `first`, served or not, with their
   * place (for the last one again past the last, and for what a miss tells).
   *
   * @example
   * lineup.startingWith(key).at(-1) // the last session that starts with this frame
   */
  startingWith(first: string): { session: LoadedSession; index: number; served: boolean }[] {
    const out: { session: LoadedSession; index: number; served: boolean }[] = [];
    this.slots.forEach((s, index) => {
      if ('session' in s && firstKey(s.session) === first) out.push({ session: s.session, index, served: this.served[index]! });
    });
    return out;
  }

  /**
   * The session a miss is told against when no session starts with the connect's frame: of
   * those read so far, the nearest by `distance` (how far its first frame is from the
   * connect's), so the miss names what the user changed, not what another recording differs in;
   * among equally near ones, the first not served, else the last one.
   *
   * @example
   * lineup.toldAgainst((s) => differenceCount(mine, firstFrameOf(s))) // the nearest recorded frame
   */
  toldAgainst(distance: (s: LoadedSession) => number = () => 0): LoadedSession | undefined {
    let best: { session: LoadedSession; d: number; served: boolean } | undefined;
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i]!;
      if (!('session' in s)) continue;
      const d = distance(s.session);
      const served = this.served[i]!;
      // Nearer wins. As near, a later one wins over a served one: so the first not served is
      // kept, and among served ones only, the last.
      if (!best || d < best.d || (d === best.d && best.served)) best = { session: s.session, d, served };
    }
    return best?.session;
  }
}
