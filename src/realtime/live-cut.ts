/**
 * Chaos's `close` on a session that goes to the upstream to be recorded (record mode, update
 * mode for a connect the tape has no session of): the session is recorded as usual, but its
 * client is closed (1011) where a replay of the very session being recorded would close it
 * (./session.ts, middleOfFirstResponse), while the upstream side goes on: the response is
 * completed and stored, and the upstream session stays open for the reconnect, which replays
 * what was recorded and then goes on live in that same session, recorded as its continuation.
 * So the session stored is whole, and a replay of it (CI) gives the first connect and the
 * reconnect what the recording run gave them: a test of the fault passes on the run that
 * records it too (docs/chaos.md, "Realtime sessions").
 *
 * The replay's rule cuts the first response of a session (the frames of a step, from its start
 * or the completing frame before them, up to a frame that completes a response) after the
 * first half of its frames, at least one. Live, how many frames a response has is known only
 * when its completing frame comes; but frame j of it is sure to be in the first half once frame
 * 2j+1 came and did not complete it. So the client gets the frames of a possible response at
 * half the upstream's pace, and the rest at the cut: exactly the frames a replay would send.
 *
 * Frames held while the upstream says nothing more for {@link QUIET_MS} go out all the same:
 * an upstream that waits is waiting for the client (a model does not stop mid-response for
 * that long), and a client may wait for the last of them before it sends its next frame (a
 * replay sends a step's frames at once). Should the response go on after all, the client is
 * closed at its completing frame, later than its replay will be, still before its end.
 */
import type { WebSocket } from 'ws';
import type { LoadedSession } from './tape.ts';

/**
 * Hands a reconnect that replayed a session recorded behind the fault past its last recorded
 * frame over to the live session: `frame` is the client frame the recording does not have yet,
 * `swap` the ids the client knows in place of the recorded ones (recorded -> the client's).
 */
export type Continue = (client: WebSocket, frame: Buffer, binary: boolean, swap: ReadonlyMap<string, string> | undefined) => void;

/**
 * A session recorded behind chaos's close, waiting for its reconnect: the upstream stays open
 * and the recording goes on, so the session stored is whole, as a replay of it will be (the
 * reconnect replays what is recorded so far, then goes on live with the same upstream session).
 */
export interface BehindFault {
  /**
   * The session as recorded so far, read as a replay reads it, and how the reconnect goes on
   * live past it (undefined once the session ended: the upstream closed, or the proxy stopped).
   */
  resume(): { session: LoadedSession; continues?: Continue };
}

/** What the endpoint does with a live session's fault (once: the first call settles it). */
export interface LiveFault {
  /** The close reason, naming the fault (the one a replay of the session closes with). */
  reason: string;
  /**
   * The client was closed at the cut: `behind` is the session recorded behind the fault, held
   * for the reconnect (undefined when it could not be stored: the reconnect goes to the upstream).
   */
  injected(behind: BehindFault | undefined): void;
  /** The session ended (or never opened) before its first response was complete: nothing was cut. */
  missed(): void;
}

/** How long frames may wait for the cut with nothing new from the upstream (see above). */
export const QUIET_MS = 1000;

/** A server frame as it goes on the wire. */
export type WireFrame = readonly [data: Buffer, binary: boolean];

/**
 * What to do with a server frame: `pass` as any live session does (the prelude, a completing
 * frame with no response before it), or send `release` now (the frame itself may be held for
 * later), or send `cut` and then close the client: this frame completed the first response.
 */
export type CutVerdict = { pass: true } | { release: WireFrame[] } | { cut: WireFrame[] };

/**
 * Decides, frame by frame, which of a live session's server frames its client gets before the
 * fault's close.
 *
 * @example
 * const cutter = new LiveCut()
 * cutter.step()                                // a client frame: a step starts
 * cutter.server(Buffer.from('{"a":1}'), false, false) // { release: [the frame] } (always the first)
 * cutter.server(Buffer.from('{"done":1}'), false, true) // { cut: [] }: close the client now
 */
export class LiveCut {
  /** Frames of the current step since its start or its last completing frame, none of them completing. */
  private held: WireFrame[] = [];
  /** How many of `held` went out. */
  private released = 0;
  /** Whether a client frame came: the frames before it (the prelude) are never cut, as in a replay of a session with steps. */
  private stepped = false;
  /** The cut was made: every later frame passes (the session's caller stops forwarding). */
  private done = false;

  /**
   * The client sent a frame that starts a step of the recording (not the next chunk of an
   * audio run): the frames held go out, since no response completed after them in their step.
   */
  step(): WireFrame[] {
    this.stepped = true;
    if (this.done) return [];
    const out = this.held.slice(this.released);
    this.held = [];
    this.released = 0;
    return out;
  }

  /** Whether frames wait for the cut (then the caller calls {@link quiet} once the upstream is quiet for QUIET_MS). */
  get holding(): boolean {
    return !this.done && this.released < this.held.length;
  }

  /** The upstream went quiet: the frames held go out (see QUIET_MS); later ones are held as before. */
  quiet(): WireFrame[] {
    if (this.done) return [];
    const out = this.held.slice(this.released);
    this.released = this.held.length;
    return out;
  }

  /** A server frame (`completes`: it completes a response, as the protocol says). */
  server(data: Buffer, binary: boolean, completes: boolean): CutVerdict {
    if (!this.stepped || this.done) return { pass: true };
    if (completes) {
      // A completing frame with no frames of its own before it is no response: it goes out as usual.
      if (this.held.length === 0) return { pass: true };
      this.done = true;
      const upTo = Math.max(1, Math.floor(this.held.length / 2));
      const out = this.held.slice(this.released, upTo);
      this.held = [];
      return { cut: out };
    }
    this.held.push([data, binary]);
    // With n frames and no completion yet, the response has at least n frames before its end:
    // the first max(1, floor(n / 2)) of them go out whatever comes next.
    const sure = Math.max(1, Math.floor(this.held.length / 2));
    const out = this.held.slice(this.released, sure);
    this.released = Math.max(this.released, sure);
    return { release: out };
  }
}
