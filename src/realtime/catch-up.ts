/**
 * Update mode: a connect that was replayed a recording until its frames differed from every
 * recorded session of its connect goes on live, recorded as a new session, in place of a miss
 * (docs/realtime.md, "Update mode"). The upstream session is brought to where the client is:
 * the upstream's opening comes, then the client frames the replay answered are sent to it. Its
 * frames are recorded, as every frame of the session is; each that stands for one the client
 * was sent from the recording (alike up to ids and times, else of the same kind: a model's
 * answer given again in other words) is not sent on, its ids mapped to the ones the client was
 * sent; any other (one the recording had after the frame that differed) goes to the client.
 * Once every frame the client was sent is accounted for, or the upstream says nothing for
 * {@link QUIET_MS}, the client's frame that differed and those after it go live.
 *
 * What the catch-up cannot give back: client frames it sends that echo an id the recording's
 * server made up (a tool's `call_id`) name that id, which the upstream does not know.
 */
import { hashValue } from '../core/index.ts';
import type { RealtimeProtocol } from '../providers/realtime.ts';
import { QUIET_MS } from './live-cut.ts';
import { serverShape } from './opening.ts';
import type { Played } from './session.ts';

/** A replayed connect going on live: what it sent and was sent so far. */
export interface GoLive {
  /** The client frames the replay answered, in order. */
  answered: [Buffer, boolean][];
  /** The frame the recordings do not have, and those that came after it, in order. */
  rest: [Buffer, boolean][];
  /** The server frames the client was sent, as recorded, and how many of them came before its first frame. */
  sent: readonly Played[];
  prelude: number;
  /** Recorded ids -> the ones the client was sent in their place. */
  swap: ReadonlyMap<string, string> | undefined;
}

/** A JSON frame's text parsed, or undefined. */
function parse(b: Buffer): unknown {
  try {
    return JSON.parse(b.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A frame's shape with its ids left out (and given to `id` in order), times left out. */
const shapeOf = (protocol: RealtimeProtocol, text: string, id: (raw: string) => void): string =>
  hashValue(
    serverShape(protocol, { ms: 0, text }, (raw) => {
      id(raw);
      return '#';
    }),
  );

/**
 * @example
 * const c = new CatchUp(protocol, from, { send: (b, binary) => up.send(b, { binary }), done: (ids) => goOn(ids) })
 * upstream.on('message', (b) => c.server(b)) // while c.active
 */
export class CatchUp {
  /** The frames the client was sent not matched by an upstream frame yet: shape, kind, and ids as the client knows them. */
  private readonly left: { shape: string; kind: string; ids: string[] }[] = [];
  /** Upstream frames of its opening still to come before the answered frames go. */
  private opening: number;
  /** Upstream ids -> the ones the client was sent in their place. */
  private readonly map = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  active = true;

  constructor(
    private readonly protocol: RealtimeProtocol,
    private readonly from: GoLive,
    private readonly to: { send: (frames: [Buffer, boolean][]) => void; forward: (b: Buffer, binary: boolean) => void; done: (ids: Map<string, string>) => void },
  ) {
    const known = (raw: string) => from.swap?.get(raw) ?? raw;
    for (const f of from.sent) {
      const msg = f.json ? parse(f.data) : undefined;
      if (msg === undefined) continue;
      const ids: string[] = [];
      this.left.push({ shape: shapeOf(protocol, f.data.toString('utf8'), (raw) => ids.push(known(raw))), kind: protocol.frameName(msg), ids });
    }
    this.opening = from.prelude;
    if (this.opening === 0) this.sendAnswered();
    else this.wait();
  }

  /** An upstream frame during the catch-up (recorded by the caller): not sent on when it stands for one the client was sent. */
  server(b: Buffer, binary: boolean): void {
    if (!this.active) return;
    const msg = binary ? undefined : parse(b);
    let stands = false;
    if (msg !== undefined) {
      const ids: string[] = [];
      const shape = shapeOf(this.protocol, b.toString('utf8'), (raw) => ids.push(raw));
      let i = this.left.findIndex((x) => x.shape === shape);
      if (i >= 0) {
        const [m] = this.left.splice(i, 1);
        m!.ids.forEach((mine, k) => {
          const up = ids[k];
          if (up !== undefined && up !== mine && !this.map.has(up)) this.map.set(up, mine);
        });
        stands = true;
      } else {
        const kind = this.protocol.frameName(msg);
        i = this.left.findIndex((x) => x.kind === kind);
        if (i >= 0) {
          this.left.splice(i, 1);
          stands = true;
        }
      }
    }
    if (!stands) this.to.forward(b, binary);
    if (this.opening > 0 && --this.opening === 0) this.sendAnswered();
    else this.settled();
  }

  /** The upstream's opening came: the frames the replay answered go to it. */
  private sendAnswered(): void {
    this.opening = 0;
    this.to.send(this.from.answered);
    this.settled();
  }

  /** Done once every frame the client was sent is accounted for; else waits on. */
  private settled(): void {
    if (this.opening === 0 && this.left.length === 0) this.finish();
    else this.wait();
  }

  /** An upstream that says nothing more for QUIET_MS answered all it will. */
  private wait(): void {
    clearTimeout(this.timer);
    if (!this.active) return;
    this.timer = setTimeout(() => (this.opening > 0 ? (this.sendAnswered(), this.wait()) : this.finish()), QUIET_MS).unref();
  }

  private finish(): void {
    if (!this.active) return;
    this.active = false;
    clearTimeout(this.timer);
    this.to.done(this.map);
  }

  /** The session ended meanwhile. */
  stop(): void {
    this.active = false;
    clearTimeout(this.timer);
  }
}
