/**
 * Choosing an OpenAI session at its client's first frame. The connect is sent the opening of
 * the next session in recorded order (`session.created` comes before the client says anything),
 * then its first frame picks, among the sessions of the connect not replayed yet that opened
 * the same way (src/realtime/opening.ts), the one that starts with that frame: sessions recorded
 * with other instructions or tools replay in any connect order, as Gemini's do by their `setup`.
 * Sessions that start alike still go in connect order (src/realtime/lineup.ts).
 *
 * When none fits, the connect is a miss told against the session whose opening it got, using
 * up no recording; if a session of the connect does start with the frame (replayed already, or
 * opened otherwise), the miss says which, and that recording needs no new one.
 */
import type { RealtimeProtocol } from '../providers/realtime.ts';
import type { Ticket } from './lineup.ts';
import { openingIds, sameOpening } from './opening.ts';
import { firstFrameKey } from './session.ts';
import type { LoadedSession, RealtimeTape } from './tape.ts';

/** What the connect's first frame chose. */
export interface Chosen {
  /** The session to replay (the one whose opening was sent, or one that opened the same way). */
  session: LoadedSession;
  /** Its place in the connect's lineup, when this connect has it (not a session given again past the last, nor a miss). */
  index?: number;
  /** Ids of the chosen session's opening -> the ones the client was sent in their place. */
  ids?: Map<string, string>;
  /** What a miss at the first frame says in place of how to re-record: the session that does start with it. */
  note?: string;
  /** The frame is a miss even though `session` starts with it (that session was replayed already). */
  refuse?: boolean;
  /** No session fits the frame: `session` is the one the miss is told against (not this connect's). */
  told?: true;
}

/** A replayed connect whose session its first client frame chooses (ReplaySession's `choice`). */
export interface FirstFrameChoice {
  /** The session for the connect's first client frame. */
  choose(first: Buffer): Promise<Chosen>;
  /** The client left before its first frame: the session it held goes back. */
  release(): void;
}

/**
 * The choice for a connect holding `ticket` (RealtimeTape.reserve); `label` names the connect
 * in messages (`GET /v1/realtime?model=gpt-realtime`).
 *
 * @example
 * const ticket = await tape.reserve(key)
 * new ReplaySession({ ...base, client, choice: firstFrameChoice(tape, protocol, key, label, ticket) }, ticket.session)
 */
export function firstFrameChoice(tape: RealtimeTape, protocol: RealtimeProtocol, key: string, label: string, ticket: Ticket): FirstFrameChoice {
  const lineup = tape.lineup(key)!;
  const sent = ticket.session;
  const fits = (s: LoadedSession): boolean => sameOpening(protocol, sent, s);
  const chosen = (session: LoadedSession, index?: number): Chosen => ({ session, ...(index === undefined ? {} : { index }), ...(session === sent ? {} : { ids: openingIds(protocol, sent, session) }) });
  return {
    release: () => lineup.release(ticket),
    async choose(frame) {
      const first = firstFrameKey(protocol, frame);
      // Audio or binary data first: nothing to choose by, the sessions go in connect order.
      if (first === undefined) {
        const took = await lineup.take(ticket);
        return chosen(took.session, took.index);
      }
      const got = await lineup.choose(first, fits, ticket);
      if (got) return chosen(got.session, got.index);
      const starting = lineup.startingWith(first);
      // Past the last session that starts with it: that one again, unless strict order.
      const again = tape.strictOrder ? undefined : starting.filter((s) => fits(s.session)).at(-1);
      lineup.release(ticket);
      if (again) return chosen(again.session);
      // A miss, told against the session whose opening was sent; it stays for another connect.
      const other = starting.find((s) => !s.served && !fits(s.session)) ?? starting[0];
      if (!other) return { session: sent, told: true };
      const name = protocol.frameName(JSON.parse(frame.toString('utf8')));
      const which = `session ${other.index + 1} of ${label} starts with this ${name}`;
      const note = fits(other.session)
        ? `${which}; it was replayed already (with --strict-order each recorded session replays once)`
        : `${which}, but it opened with other server frames than the session this connect was sent before its first frame; sessions that open differently replay in connect order: connect them in the order recorded`;
      return { session: sent, note, refuse: starting.some((s) => s.session === sent), told: true };
    },
  };
}
