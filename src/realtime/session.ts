/**
 * One realtime session between a client and a server over WebSocket, live (recorded as it goes)
 * or replayed from the tape. The provider's protocol (src/providers/realtime.ts) says what keys
 * a client frame, where audio is and which server frames complete a response; this file is the
 * same for every provider.
 *
 * Recording. Client frames go to the server at once. Server frames go to the client at once,
 * except a frame that completes a response (`response.done`, `turnComplete`, `setupComplete`,
 * `error`...): the frames up to it are appended to the tape first, and it is forwarded only
 * once they are durable. That is what "acknowledged" means for a session: a client that saw a
 * response complete has it on the tape; a kill -9 loses at most the response in flight, which
 * the client never saw complete. Audio the client appends in chunks is one run, keyed by the
 * digest of its bytes, so a different chunking keys the same.
 *
 * Replay is driven by the client: what the server sent before the first client frame goes out
 * on connect; each client frame is compared with the recording's next client frame and the
 * server frames that followed it go out (at once, or with their recorded gaps). Audio is
 * compared byte for byte against the recorded run, and server frames that came while it was
 * arriving go out once the client has sent as many bytes as the server had then. Where the
 * connect's first frame chooses its session (src/realtime/choice.ts), that frame and those
 * after it wait for the choice, then go through against the chosen session. A client frame the
 * session does not have waits the same way while another session of the connect is looked for
 * that has it and all the client was sent (src/realtime/switch.ts); without one it is a miss,
 * which gives the session back for a later connect.
 */
import type { WebSocket } from 'ws';
import { hashValue } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { firstDifference, maskedPath, valueAt } from '../match/json-difference.ts';
import { closeReason, type RealtimeProtocol } from '../providers/realtime.ts';
import type { RealtimeEnd, RealtimeFrame } from '../store/records.ts';
import { maskSplitTexts } from '../store/stream-redact.ts';
import { echoing, type EchoingRedactor, type EchoSource } from '../store/echo-redact.ts';
import { CatchUp, type GoLive } from './catch-up.ts';
import type { Chosen, FirstFrameChoice } from './choice.ts';
import { Ids } from './ids.ts';
import { idDifference, idsOfStep, type IdDifference } from './issued-ids.ts';
import { LiveCut, QUIET_MS, type BehindFault, type Continue, type LiveFault, type WireFrame } from './live-cut.ts';
import type { Lineup, Occupant } from './lineup.ts';
import { fit, serverIndex, takeOver, type Outcome, type Progress, type Sent, type Takeover } from './switch.ts';
import { blobDigest, type HeadTurn, type LoadedSession, type RealtimeTape, type RealtimeTiming } from './tape.ts';

export type { RealtimeTiming } from './tape.ts';

/** How a client frame that is no JSON message is named in a miss. */
const notJson = (binary: boolean): string => (binary ? 'binary data' : 'text that is not JSON');

export type Data = Buffer | ArrayBuffer | Buffer[];

const BLOB_REF = /"tapedeck-blob:([0-9a-f]{64})"/g;

/** A ws message's bytes as one Buffer. */
export const asBuffer = (d: Data): Buffer => (Buffer.isBuffer(d) ? d : Array.isArray(d) ? Buffer.concat(d) : Buffer.from(d));

/** A frame's JSON value, or undefined for text that is not JSON and binary that is not UTF-8 JSON. */
function parse(b: Buffer): unknown {
  // JSON starts with `{` or `[` here: every realtime protocol sends objects.
  let i = 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  if (b[i] !== 0x7b && b[i] !== 0x5b) return undefined;
  try {
    return JSON.parse(b.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The key of a connect's first client frame, as the recording keyed it, when it can choose a
 * session (JSON that is not audio: audio is keyed by the whole run it starts).
 *
 * @example
 * firstFrameKey(geminiProtocol, Buffer.from('{"setup":{"model":"models/gemini-live"}}')) // hex digest
 */
export function firstFrameKey(protocol: RealtimeProtocol, b: Buffer): string | undefined {
  const msg = parse(b);
  if (msg === undefined || protocol.clientAudio(msg)) return undefined;
  return hashValue(protocol.frameKey(msg, new Ids().id));
}

const audioKey = (stream: string, digest: string): string => hashValue({ audio: stream, digest });

const ordinal = (n: number): string => `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

const shown = (v: unknown): string => {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v) ?? String(v);
  return s.length <= 40 ? s : `${s.slice(0, 39)}…`;
};

export interface RealtimeSessionOptions {
  tape: RealtimeTape;
  protocol: RealtimeProtocol;
  client: WebSocket;
  /** The connect, for messages (`GET /v1/realtime?model=...`, secrets left out). */
  label: string;
  timing?: RealtimeTiming;
  /** The full report of a miss (default: the tape's warning channel). */
  onMiss?: (report: string) => void;
  /** The session is over (both sides closed, its records written). */
  onDone?: () => void;
  /**
   * Replay only: chaos may close the session (1011) in the middle of its first response. Asked
   * once, when the replay gets there in the session it replays then (the one its frames chose:
   * src/realtime/choice.ts, ./switch.ts), whether it does (see {@link ReplayFault}).
   */
  chaos?: ReplayChaos;
  /**
   * Replay only: the session replayed is one being recorded now behind chaos's close (the
   * reconnect's, ./live-cut.ts); past its last recorded frame the client goes on live, handed
   * over with the frame it sent and the ids it knows in place of the recorded ones.
   */
  continues?: Continue;
  /**
   * What a miss says in place of how to re-record: recording again cannot help a reconnect whose
   * frames differ from the session recorded behind chaos's close (it is given that session in
   * record mode too).
   */
  missHint?: string;
  /**
   * Live only: chaos's close on a session being recorded (./live-cut.ts): the client is closed
   * where a replay of this session would close it, the upstream session kept open and recorded
   * on for the reconnect (resume).
   */
  liveFault?: LiveFault;
  /**
   * Replay only: the session is chosen at the client's first frame among those that opened as
   * the one given did (src/realtime/choice.ts); the given one's opening goes out at connect.
   */
  choice?: FirstFrameChoice;
  /**
   * Replay only: the lineup of the connect's sessions (src/realtime/lineup.ts) and the place of
   * the session given (undefined: the last one again, holding none; with `choice`, the place is
   * the chosen one's). A replay that misses gives its place back; one whose client frame differs
   * goes on with another session of the lineup where all the client saw holds
   * (src/realtime/switch.ts). Without it (a reconnect replaying a session recorded behind
   * chaos's close) the replay does neither. A replay chaos closes gives its place back.
   */
  seat?: { lineup: Lineup; index?: number };
  /**
   * Replay in update mode: a connect whose frames turn out to differ from every recorded session
   * of its connect goes on live and is recorded, in place of a miss (the endpoint opens the
   * upstream). Given the client, what it sent and was sent so far (see {@link GoLive}).
   */
  goLive?: (client: WebSocket, from: GoLive) => void;
  /**
   * Live only: a connect that replayed a recording until its frames differed from every one
   * (`goLive`): the frames it sent before are sent upstream first, and the upstream's answers to
   * them are recorded but not sent on (the client had the recording's), their ids mapped to the
   * ones the client was sent; then the rest goes live.
   */
  catchUp?: GoLive;
  /**
   * What the connect carried (its headers, URL and the keys of its subprotocols), so frames have
   * the connect's own secrets masked where they repeat them (src/store/echo-redact.ts): live,
   * the server's and the client's frames as stored; in replay, a client frame as a miss shows it.
   */
  asked?: EchoSource;
}

/** The fault a replay injects: the close reason naming it, and `sent`, called once the close is on its way (or its client left): only then can a connect be its retry. */
export interface ReplayFault {
  reason: string;
  sent: () => void;
}

/**
 * Chaos's say over a replay: `decide` is asked once, when the replay reaches the middle of the
 * first response of `session` (the session it replays then), for the fault to inject there, or
 * undefined (the session is replayed whole). So which recording a connect is the reconnect of
 * is told by its frames, not by when it connected.
 */
export interface ReplayChaos {
  decide(session: LoadedSession): ReplayFault | undefined;
}

/** Where a faulted replay closes: after `frames` server frames of step `step` (-1: the prelude). */
export interface CutPoint {
  step: number;
  frames: number;
}

/** The close code of a server that failed mid-session (RFC 6455: an unexpected condition). */
export const FAULT_CLOSE_CODE = 1011;

/**
 * The middle of a session's first response: the first completing frame that has frames of its
 * own before it (after the step's start or the completing frame before it), cut after the first
 * half of those (at least one: the response has begun, its end never comes). A client that
 * sends its frames back to back gets every answer in one step (`session.updated` first, then
 * the response up to `response.done`), so a step is read past its first completing frame. A
 * session with no such response is cut before its first completing frame, or else at its end.
 * A session recorded now is cut by the same rule as it goes (./live-cut.ts).
 *
 * @example
 * middleOfFirstResponse(prelude, steps, protocol) // { step: 1, frames: 4 }: after 4 server frames of step 1
 */
export function middleOfFirstResponse(prelude: readonly Played[], steps: readonly Step[], protocol: RealtimeProtocol): CutPoint {
  let before: CutPoint | undefined;
  for (let s = 0; s < steps.length; s++) {
    const server = steps[s]!.server;
    let start = 0;
    for (let i = 0; i < server.length; i++) {
      const msg = parse(server[i]!.data);
      if (msg === undefined || !protocol.completes(msg)) continue;
      if (i > start) return { step: s, frames: start + Math.max(1, Math.floor((i - start) / 2)) };
      before ??= { step: s, frames: i };
      start = i + 1;
    }
  }
  if (before) return before;
  return steps.length > 0 ? { step: steps.length - 1, frames: steps[steps.length - 1]!.server.length } : { step: -1, frames: prelude.length };
}

/**
 * A live session: forwards both ways and records.
 *
 * @example
 * new LiveSession({ tape, protocol, client, label }, upstream, openKey, { url, protocols })
 */
export class LiveSession implements BehindFault {
  private readonly opts: RealtimeSessionOptions;
  /** The client: the connect's, or the reconnect's once it went on live after chaos's close (handover). */
  private client: WebSocket;
  private readonly tape: RealtimeTape;
  private readonly up: WebSocket;
  private readonly sid: string;
  private readonly t0 = performance.now();
  private readonly ids = new Ids();
  private frames: RealtimeFrame[] = [];
  private part = 0;
  private run: { stream: string; chunks: Buffer[]; bytes: number; frame: Extract<RealtimeFrame, { audio: unknown }> } | undefined;
  /** Server frames wait here behind a completing frame that is being stored. */
  private out: Promise<void> = Promise.resolve();
  private holding = 0;
  private ended = false;
  private readonly records: boolean;
  /**
   * Settles once the session's head is appended, which may wait for sessions of its key that
   * connected earlier (RealtimeTape.headTurn). Parts are appended after it: a response is told
   * stored only when the session it belongs to can be found.
   */
  private headStored: Promise<void> = Promise.resolve();
  /** The tape's redactor, plus the connect's secrets looked for in the server's frames. */
  private readonly masks: EchoingRedactor;
  /**
   * With chaos's close (opts.liveFault): which server frames the client gets before the close,
   * and the session as stored, kept for the reconnect (its frames, and the audio they refer to).
   */
  private readonly cutter: LiveCut | undefined;
  private readonly kept: { key: string; head: { sid: string; provider: string; url: string; protocols: string[] }; frames: RealtimeFrame[]; blobs: Map<string, Uint8Array> } | undefined;
  /**
   * The cut was made: nothing more goes to the client, nor from it to the upstream, until a
   * reconnect goes on live (handover); the upstream's frames are recorded meanwhile.
   */
  private clientCut = false;
  /** How the session ended, for a reconnect that comes after (resume). */
  private endedAs: RealtimeEnd | undefined;
  /** Server frames that came after the reconnect's snapshot of the session (resume), sent to it at the handover. */
  private backlog: WireFrame[] | undefined;
  /** After a handover: ids the reconnect knows in place of the recorded client's, both ways. */
  private ids2: { toUp: Map<string, string>; toClient: ReadonlyMap<string, string> } | undefined;
  /** The fault's close went out (the client's own close after it is no missed fault). */
  private faultOut = false;
  /** Sends the frames held for the cut once the upstream is quiet (./live-cut.ts, QUIET_MS). */
  private quietTimer: NodeJS.Timeout | undefined;
  /** With opts.catchUp: the upstream brought to where the replayed client is (./catch-up.ts); the client's frames wait meanwhile. */
  private catchUp: CatchUp | undefined;
  private held: [Buffer, boolean][] = [];
  private feeding = false;

  constructor(opts: RealtimeSessionOptions, upstream: WebSocket, openKey: string, head: { url: string; protocols: string[] }, turn?: HeadTurn) {
    this.opts = opts;
    this.tape = opts.tape;
    this.masks = opts.asked && opts.tape.records ? echoing(opts.tape.redactor, opts.asked) : opts.tape.redactor;
    this.up = upstream;
    this.records = opts.tape.records;
    this.sid = this.tape.newSid();
    const h = { sid: this.sid, provider: opts.protocol.provider, url: head.url, protocols: head.protocols };
    // A fault on a session that records nothing has nothing to cut (the endpoint never asks).
    if (opts.liveFault && !this.records) opts.liveFault.missed();
    else if (opts.liveFault) {
      this.cutter = new LiveCut();
      this.kept = { key: openKey, head: h, frames: [], blobs: new Map() };
    }
    if (this.records) {
      this.headStored = (turn ? turn.append(h) : this.tape.appendHead(openKey, h)).catch(() => {});
    } else turn?.skip();
    this.client = opts.client;
    this.bind(opts.client);
    upstream.on('message', (d: Data, binary: boolean) => this.fromServer(asBuffer(d), binary));
    upstream.on('close', (code: number, reason: Buffer) => this.serverClosed(code, reason.toString()));
    upstream.on('error', () => {});
    if (opts.catchUp) {
      this.catchUp = new CatchUp(opts.protocol, opts.catchUp, {
        send: (frames) => {
          this.feeding = true;
          for (const [b, binary] of frames) this.fromClient(b, binary);
          this.feeding = false;
        },
        forward: (b, binary) => this.forward(b, binary),
        done: (ids) => {
          if (ids.size > 0) this.ids2 = { toClient: ids, toUp: new Map([...ids].map(([up, mine]) => [mine, up])) };
          for (const [b, binary] of this.held.splice(0)) this.fromClient(b, binary);
        },
      });
    }
  }

  /** Listens to a client socket, while it is the session's client (a faulted one's is not, once its reconnect took over). */
  private bind(ws: WebSocket): void {
    ws.on('message', (d: Data, binary: boolean) => {
      if (ws === this.client) this.fromClient(asBuffer(d), binary);
    });
    ws.on('close', (code: number, reason: Buffer) => {
      if (ws === this.client) this.clientClosed(code, reason.toString());
    });
    ws.on('error', () => {});
  }

  /**
   * The session recorded behind chaos's close, for its reconnect (./live-cut.ts, BehindFault):
   * the frames recorded so far, read as a replay reads them; server frames that come after this
   * go to the reconnect when it goes on live.
   *
   * @example
   * const { session, continues } = live.resume() // replay session, then continues(client, frame, binary, swap)
   */
  resume(): { session: LoadedSession; continues?: Continue } {
    const k = this.kept!;
    this.backlog = [];
    const session = this.tape.recordedSession(k.key, k.head, [...k.frames, ...this.frames], this.ended ? this.endedAs : undefined, k.blobs);
    if (this.ended) return { session };
    return { session, continues: (client, frame, binary, swap) => this.handover(client, frame, binary, swap) };
  }

  /**
   * The reconnect replayed the session recorded so far and sends a frame past it: it becomes the
   * session's client. Its frames go upstream and are recorded with the recorded client's ids in
   * place of its own (the upstream knows those), and the upstream's frames reach it with its own.
   */
  private handover(client: WebSocket, frame: Buffer, binary: boolean, swap: ReadonlyMap<string, string> | undefined): void {
    if (this.ended) {
      // The upstream went away meanwhile: the client is told as a replay of the stored session would tell it.
      const e = this.endedAs;
      if (client.readyState !== client.OPEN) return;
      if (e && e.by === 'server' && !e.cut && e.code !== 1005 && e.code !== 1006) client.close(e.code, closeReason(e.reason));
      else client.terminate();
      return;
    }
    this.client = client;
    this.clientCut = false;
    if (swap && swap.size > 0) this.ids2 = { toClient: swap, toUp: new Map([...swap].map(([rec, mine]) => [mine, rec])) };
    this.bind(client);
    const backlog = this.backlog ?? [];
    this.backlog = undefined;
    for (const [d, bin] of backlog) this.forward(d, bin);
    this.fromClient(frame, binary);
  }

  /** A JSON text frame with ids replaced (`"from"` -> `"to"`), as a replay puts a client's own ids back. */
  private static swapped(b: Buffer, binary: boolean, ids: ReadonlyMap<string, string> | undefined): Buffer {
    if (!ids || binary) return b;
    let t = b.toString('utf8');
    for (const [from, to] of ids) if (t.includes(`"${from}"`)) t = t.split(`"${from}"`).join(JSON.stringify(to));
    return Buffer.from(t);
  }

  /** Sends a server frame to the client, with its ids (after a handover). */
  private toClient(b: Buffer, binary: boolean): void {
    const client = this.client;
    if (client.readyState === client.OPEN) client.send(LiveSession.swapped(b, binary, this.ids2?.toClient), { binary });
  }

  private ms(): number {
    return Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  /** A client frame that came before the session was made (the one that chose it). */
  receive(b: Buffer, binary: boolean): void {
    this.fromClient(b, binary);
  }

  private fromClient(b: Buffer, binary: boolean): void {
    // Past the fault's cut the client is being closed: what it sends is neither answered nor
    // recorded (a replay of the session does not answer it either).
    if (this.clientCut) return;
    // The upstream is being brought to where the replay left the client: its frames wait.
    if (this.catchUp?.active && !this.feeding) {
      this.held.push([b, binary]);
      return;
    }
    // A reconnect's frame, with the ids the upstream knows.
    b = LiveSession.swapped(b, binary, this.ids2?.toUp);
    if (this.up.readyState === this.up.OPEN) this.up.send(b, { binary });
    if (!this.records || this.ended) return;
    const msg = parse(b);
    const audio = msg === undefined ? undefined : this.opts.protocol.clientAudio(msg);
    if (audio) {
      const bytes = Buffer.from(audio.base64, 'base64');
      if (this.run && this.run.stream === audio.stream) {
        this.run.chunks.push(bytes);
        this.run.bytes += bytes.length;
        this.run.frame.audio.chunks++;
        return;
      }
      this.closeRun();
      const frame = { ms: this.ms(), c: 1 as const, key: '', audio: { stream: audio.stream, blob: '', bytes: 0, chunks: 1 } };
      this.run = { stream: audio.stream, chunks: [bytes], bytes: bytes.length, frame };
      this.frames.push(frame);
      return this.stepped();
    }
    this.closeRun();
    if (msg === undefined) {
      const d = this.blob(b);
      // `asText`: a text frame that is not JSON, as a miss names it (keyed by its bytes all the same).
      this.frames.push({ ms: this.ms(), c: 1, key: hashValue({ binary: d }), blob: d, bytes: b.length, ...(binary ? {} : { asText: true as const }) });
      return this.stepped();
    }
    const key = hashValue(this.opts.protocol.frameKey(msg, this.ids.id));
    // Keyed as sent (a frame with another key in it is another frame), stored with the connect's
    // own secrets masked as the server's frames repeating them are: a key with no known format
    // (Azure's 32 hex) is found only because the connect carried it.
    this.frames.push({ ms: this.ms(), c: 1, key, msg: this.masks.value(msg), ...(binary ? { binary: true as const } : {}) });
    this.stepped();
  }

  /** A client frame began a step of the recording: server frames held for the fault's cut go out (./live-cut.ts). */
  private stepped(): void {
    if (!this.cutter) return;
    clearTimeout(this.quietTimer);
    for (const [d, binary] of this.cutter.step()) this.forward(d, binary);
  }

  /** The upstream said nothing for QUIET_MS while frames wait for the fault's cut: they go out (./live-cut.ts). */
  private quiet(): void {
    if (this.clientCut || this.ended) return;
    for (const [d, binary] of this.cutter!.quiet()) this.forward(d, binary);
  }

  /** Stores bytes once on the tape (./tape.ts), kept at hand for the reconnect after a fault. */
  private blob(bytes: Uint8Array): string {
    const d = this.tape.appendBlob(bytes);
    this.kept?.blobs.set(d, bytes);
    return d;
  }

  /** Ends the client's audio run: its bytes stored once, its key their digest. */
  private closeRun(): void {
    const run = this.run;
    if (!run) return;
    this.run = undefined;
    const bytes = run.chunks.length === 1 ? run.chunks[0]! : Buffer.concat(run.chunks, run.bytes);
    const d = this.blob(bytes);
    run.frame.key = audioKey(run.stream, d);
    run.frame.audio.blob = d;
    run.frame.audio.bytes = run.bytes;
  }

  private fromServer(b: Buffer, binary: boolean): void {
    const msg = parse(b);
    let completes = false;
    let recorded = false;
    if (this.records && !this.ended) {
      recorded = true;
      const at = this.run ? { at: this.run.bytes } : {};
      if (msg === undefined) {
        const d = this.blob(b);
        this.frames.push({ ms: this.ms(), blob: d, bytes: b.length, ...at });
      } else {
        let text = b.toString('utf8');
        const blobs: string[] = [];
        for (const b64 of this.opts.protocol.serverAudio(msg)) {
          const bytes = Buffer.from(b64, 'base64');
          // Stored as bytes only when they give back the very same text.
          if (bytes.toString('base64') !== b64) continue;
          const quoted = `"${b64}"`;
          const i = text.indexOf(quoted);
          if (i < 0) continue;
          const d = this.blob(bytes);
          text = `${text.slice(0, i)}"tapedeck-blob:${d}"${text.slice(i + quoted.length)}`;
          blobs.push(d);
        }
        // Masked after the audio is taken out: base64 audio can hold a run that looks like a key.
        // A frame is JSON: its secret members by name too, and those of JSON text inside its
        // strings (a tool call's `arguments`), as an HTTP answer's are; else as text.
        text = text.charCodeAt(0) === 0x7b && this.masks.mayHaveSecrets(text) ? Buffer.from(this.masks.bytes(Buffer.from(text, 'utf8'), 'application/json')).toString('utf8') : this.masks.text(text);
        this.frames.push({ ms: this.ms(), text, ...(blobs.length > 0 ? { blobs } : {}), ...at, ...(binary ? { binary: true as const } : {}) });
        completes = this.opts.protocol.completes(msg);
      }
    }
    if (this.catchUp?.active) {
      // The upstream's answers to what the replay answered: recorded, not sent (./catch-up.ts).
      if (completes) {
        this.closeRun();
        void this.flush().catch(() => {});
      }
      return this.catchUp.server(b, binary);
    }
    if (this.clientCut) {
      // Past the fault's cut, before the reconnect goes on live: recorded, kept for it (the
      // frames since its snapshot of the session), a response stored once complete.
      this.backlog?.push([b, binary]);
      if (completes) {
        this.closeRun();
        void this.flush().catch(() => {});
      }
      return;
    }
    if (this.cutter && recorded) {
      const v = this.cutter.server(b, binary, completes);
      clearTimeout(this.quietTimer);
      if ('release' in v) {
        for (const [d, bin] of v.release) this.forward(d, bin);
        if (this.cutter.holding) this.quietTimer = setTimeout(() => this.quiet(), QUIET_MS).unref();
        return;
      }
      if ('cut' in v) return this.cut(v.cut);
    }
    if (completes) {
      const send = () => this.toClient(b, binary);
      this.closeRun();
      const stored = this.flush();
      this.holding++;
      this.out = this.out.then(() => stored).then(send, send).finally(() => this.holding--);
    } else this.forward(b, binary);
  }

  /** A server frame that acknowledges nothing, to the client: at once, or behind a completing frame being stored. */
  private forward(b: Buffer, binary: boolean): void {
    const send = () => this.toClient(b, binary);
    if (this.holding > 0) this.out = this.out.then(send);
    else send();
  }

  /**
   * Chaos's close, at the frame that completed the session's first response: the client gets
   * `last` (the frames before the cut not sent yet), then, once the session up to that frame is
   * stored, the close (1011). The upstream stays open and the recording goes on: the endpoint
   * holds the session for the reconnect, which replays it and then goes on live (resume), so the
   * session stored is whole, as its replay will be.
   */
  private cut(last: readonly WireFrame[]): void {
    const fault = this.opts.liveFault!;
    for (const [d, bin] of last) this.forward(d, bin);
    this.clientCut = true;
    this.closeRun();
    const stored = this.flush();
    this.holding++;
    this.out = this.out
      .then(() => stored)
      .then(
        () => true,
        // Not stored (the failed append was warned of): the client gets the fault all the same,
        // and the reconnect goes to the upstream, with nothing held for it.
        () => false,
      )
      .then((ok) => {
        const client = this.client;
        // Gone before the close: it never got the fault (its close ended the session).
        if (client.readyState !== client.OPEN) return fault.missed();
        fault.injected(ok ? this : undefined);
        this.faultOut = true;
        client.close(FAULT_CLOSE_CODE, closeReason(fault.reason));
        if (ok) return;
        void this.finish({ by: 'proxy', code: FAULT_CLOSE_CODE, reason: fault.reason });
        if (this.up.readyState === this.up.OPEN || this.up.readyState === this.up.CONNECTING) this.up.close(1000);
      })
      .finally(() => this.holding--);
  }

  /** Appends the frames since the last part (with the end, when there is one). */
  private flush(end?: RealtimeEnd): Promise<void> {
    const frames = this.frames;
    this.frames = [];
    if (frames.length === 0 && !end) return Promise.resolve();
    // A key the model repeats comes one transcript or text delta at a time, no frame holding
    // enough of it for the mask of each frame's text: the server's frames of this part are read
    // joined for it (src/store/stream-redact.ts).
    const r = this.masks;
    if (!r.keepSecrets) {
      const texts = frames.map((f) => ('text' in f ? f.text : undefined));
      for (const [i, text] of maskSplitTexts(texts, (v) => r.mask(v), r.echoes, (n) => r.isSecretField(n))) (frames[i] as { text: string }).text = text;
    }
    const n = this.part++;
    for (const f of frames) this.kept?.frames.push(f);
    return this.headStored.then(() => this.tape.appendPart(this.sid, n, frames, end));
  }

  private finish(end: RealtimeEnd): Promise<void> {
    return this.store(end).then(
      () => {},
      () => {},
    );
  }

  /** Ends the recording with `end`: resolves with the end as stored once it is durable, rejects when it could not be. */
  private store(end: RealtimeEnd): Promise<RealtimeEnd> {
    if (this.ended) return Promise.resolve(end);
    this.ended = true;
    this.endedAs = end;
    this.catchUp?.stop();
    if (!this.records) return Promise.resolve(end);
    // A close frame's reason is the server's (or client's) text like any frame's: an API that
    // names the key it refused ("Quota exceeded for key AIza...") would put it on disk.
    if (end.reason !== '') end = { ...end, reason: this.masks.text(end.reason) };
    if (end.cut) {
      // Kept up to the last complete response: what came after it is half an answer.
      this.run = undefined;
      this.frames = [];
    } else this.closeRun();
    const stored = end;
    return this.flush(end).then(() => stored);
  }

  private clientClosed(code: number, reason: string): void {
    // The faulted client's own close after the fault's: the session waits for its reconnect.
    if (this.clientCut && this.faultOut) return;
    // Gone before the fault's close went out: the client never got the fault.
    if (!this.faultOut) this.opts.liveFault?.missed();
    // A client gone without a close frame (its process killed) may have left mid-answer: the
    // answer it was getting is half one, and a replaying client, which does not die there, would
    // wait for its end forever. Kept to the last complete response and marked cut, as an
    // upstream's cut is: the replay cuts the client's next frame.
    const cut = code === 1006;
    const done = this.finish(cut ? { by: 'client', code, reason, cut: true } : { by: 'client', code, reason });
    if (this.up.readyState === this.up.OPEN || this.up.readyState === this.up.CONNECTING) {
      if (code === 1005 || code === 1006) this.up.close();
      else this.up.close(code, reason);
    }
    void done.then(() => this.opts.onDone?.());
  }

  private serverClosed(code: number, reason: string): void {
    // Ended before its first response completed: nothing to cut (once cut, the close goes out).
    if (!this.clientCut) this.opts.liveFault?.missed();
    const client = this.client;
    const cut = code === 1006;
    // The client hears of the close after the frames before it (and the session's end) are stored.
    const done = this.finish(cut ? { by: 'server', code, reason, cut: true } : { by: 'server', code, reason });
    this.out = this.out
      .then(() => done)
      .then(() => {
        if (client.readyState !== client.OPEN) return;
        if (cut) client.terminate();
        else if (code === 1005) client.close();
        else client.close(code, reason);
      });
    void this.out.then(() => this.opts.onDone?.());
  }

  /** The proxy is shutting down: the session is recorded as ended by it, both sides closed. */
  async shutdown(): Promise<void> {
    if (!this.clientCut) this.opts.liveFault?.missed();
    await this.finish({ by: 'proxy', code: 1001, reason: 'tapedeck is shutting down' });
    await this.out;
    this.client.close(1001, 'tapedeck is shutting down');
    this.up.close(1001);
  }
}

/** A step of a replayed session: a client frame and the server frames that followed it. */
export interface Step {
  client: Extract<RealtimeFrame, { c: 1 }>;
  server: Played[];
}

/** A server frame as a replay sends it. */
export interface Played {
  ms: number;
  data: Buffer;
  binary: boolean;
  at?: number;
  /** JSON text (not bytes stored whole): where ids the client made up are put back. */
  json?: true;
}

/** A session's frames as they go on the wire, made once per recorded session (read-only after). */
const prepared = new WeakMap<LoadedSession, { prelude: Played[]; steps: Step[] }>();

/**
 * A replayed session: answers the client from the tape.
 *
 * @example
 * new ReplaySession({ tape, protocol, client, label }, tape.nextSession(key)!)
 */
export class ReplaySession implements Occupant {
  private readonly opts: RealtimeSessionOptions;
  private readonly tape: RealtimeTape;
  /** The session replayed now (another one's after a switch: src/realtime/switch.ts). */
  private current: LoadedSession;
  private prelude: Played[] = [];
  private steps: Step[] = [];
  private end: RealtimeEnd | undefined;
  private readonly ids = new Ids();
  /** The recorded client's ids, numbered as it sent them (see learnIds). */
  private recordedIds = new Ids();
  /** Recorded client ids -> this client's, where they differ. */
  private swap: Map<string, string> | undefined;
  /**
   * The raw ids the session replayed now had before the step under way (its opening, and the
   * client and server frames of steps up to `seenTo`), for the check of the ids a client echoes
   * (./issued-ids.ts); read on as the replay goes, again from the start after a switch.
   */
  private seenIds = new Set<string>();
  private seenTo = -2;
  private step = 0;
  /** Bytes of the current audio step the client has sent, and server frames of it sent so far. */
  private offset = 0;
  private sent = 0;
  /**
   * Server frames of later steps the client was sent already (their index among the session's
   * server frames), skipped when their step comes: a session taken over whose server sent them
   * later than the one before did (src/realtime/switch.ts).
   */
  private ahead = new Set<number>();
  private clientFrames = 0;
  private over = false;
  private clock: Promise<void> = Promise.resolve();
  /** Where chaos would close the session replayed now (with opts.chaos, until it decided). */
  private cut: CutPoint | undefined;
  /** Whether chaos was asked (at the cut), and the fault it injects, if any. */
  private chaosAsked = false;
  private fault: ReplayFault | undefined;
  /** Whether the client's first frame came (with opts.choice, it chooses the session). */
  private started = false;
  /**
   * Client frames that came while the session is chosen or another one is looked for (the
   * first, or the one that differed, went ahead of them), in order; undefined when neither is.
   */
  private pending: [Buffer, boolean][] | undefined;
  /** The lineup and place of the session (opts.seat), once it is this replay's. */
  private seat: { lineup: Lineup; index: number | undefined } | undefined;
  /** A frame differed and another session is looked for (src/realtime/switch.ts); `pending` holds what came since. */
  private searching = false;
  /** What a miss at the first frame says in place of how to re-record (the choice found the session that starts with it). */
  private note: string | undefined;
  /** With opts.goLive: the client frames taken in order, and the server frames sent (what going live catches up on). */
  private readonly log: [Buffer, boolean][] = [];
  private readonly sentFrames: Played[] = [];
  /** Going live: frames the client sends until the endpoint takes it over, for the live session. */
  private liveQueue: [Buffer, boolean][] | undefined;

  constructor(opts: RealtimeSessionOptions, session: LoadedSession) {
    this.opts = opts;
    this.tape = opts.tape;
    this.current = session;
    this.end = session.end;
    ({ prelude: this.prelude, steps: this.steps } = this.prepare(session));
    this.recut();
    if (opts.seat && !opts.choice) this.sit(opts.seat.index);
    opts.client.on('message', (d: Data, binary: boolean) => this.fromClient(asBuffer(d), binary));
    opts.client.on('error', () => {});
    opts.client.on('close', () => {
      this.over = true;
      // A faulted session whose client left: no close of the fault is coming (see ReplayFault).
      this.fault?.sent();
      // Gone before its first frame chose: the session it was sent the opening of goes back.
      if (!this.started) opts.choice?.release();
      // Replayed (to its end or not): the place stays served. One that is looking for another
      // session when its client leaves is settled by that search (a miss gives it back).
      else if (this.seat?.index !== undefined && this.pending === undefined) this.seat.lineup.leave(this.seat.index, this);
      opts.onDone?.();
    });
    if (this.cut?.step === -1 && this.faulted()) {
      this.play(this.prelude.slice(0, this.cut.frames), 0);
      this.closeFaulted();
      return;
    }
    this.play(this.prelude, 0);
    this.maybeEnd();
  }

  /** A client frame that came before the session was made (the one that chose it). */
  receive(b: Buffer, binary: boolean): void {
    this.fromClient(b, binary);
  }

  /** Where chaos would cut the session replayed now (opts.chaos; once it decided, nothing changes). */
  private recut(): void {
    if (this.opts.chaos && !this.chaosAsked) this.cut = middleOfFirstResponse(this.prelude, this.steps, this.opts.protocol);
  }

  /**
   * At the cut: whether chaos closes the session here (asked once, with the session replayed
   * now, so a reconnect is told by the recording its frames chose).
   */
  private faulted(): boolean {
    if (!this.chaosAsked) {
      this.chaosAsked = true;
      this.fault = this.opts.chaos?.decide(this.current);
    }
    return this.fault !== undefined;
  }

  /** Takes the session's place in the lineup (opts.seat) as this replay's. */
  private sit(index: number | undefined): void {
    this.seat = { lineup: this.opts.seat!.lineup, index };
    if (index !== undefined) this.seat.lineup.occupy(index, this);
  }

  /** A session's frames as they go on the wire: its opening, and each client frame with the server frames that followed it. */
  private prepare(session: LoadedSession): { prelude: Played[]; steps: Step[] } {
    const ready = prepared.get(session);
    if (ready) return ready;
    const prelude: Played[] = [];
    const steps: Step[] = [];
    for (const f of session.frames) {
      if ('c' in f) steps.push({ client: f, server: [] });
      else (steps.length > 0 ? steps[steps.length - 1]!.server : prelude).push(this.played(f));
    }
    const made = { prelude, steps };
    prepared.set(session, made);
    return made;
  }

  /**
   * The client's first frame, with a choice to make (opts.choice): it and the frames after it
   * wait while the session is chosen, then go through as if it had been the session all along;
   * the ids of the opening the client was sent stand for the chosen session's.
   */
  private async choose(first: Buffer): Promise<void> {
    let got: Chosen;
    try {
      got = await this.opts.choice!.choose(first);
      if (got.ids && got.ids.size > 0) for (const [from, to] of got.ids) (this.swap ??= new Map()).set(from, to);
      this.current = got.session;
      this.end = got.session.end;
      ({ steps: this.steps } = this.prepare(got.session));
      this.recut();
      this.unseeIds();
    } catch (e) {
      this.over = true;
      return sendMiss(this.opts.client, this.opts.protocol, `tapedeck: ${errorText(e)}`);
    }
    this.note = got.note;
    // A session the frame chose (not the one a miss is told against) is this replay's.
    if (this.opts.seat && !got.told && !got.refuse && !this.over) this.sit(got.index);
    const held = this.pending ?? [];
    this.pending = undefined;
    if (got.refuse) {
      const msg = parse(first);
      this.clientFrames++;
      if (this.opts.goLive && held[0]) this.log.push(held[0]);
      return this.miss(msg, `client frame 1 (${msg === undefined ? notJson(held[0]?.[1] ?? true) : this.opts.protocol.frameName(msg)})`, undefined, held.slice(1));
    }
    for (const [b, binary] of held) this.fromClient(b, binary);
  }

  /** How far the replay has gone (src/realtime/switch.ts). */
  private progress(): Progress {
    return { step: this.step, offset: this.offset, sent: this.sent, ahead: [...this.ahead].sort((x, y) => x - y), swap: this.swap, mine: (n) => this.ids.rawOf(n) };
  }

  /**
   * How this replay would go on with `session` (place `index`) in place of its own, for another
   * replay whose frame only its session has (they trade: src/realtime/switch.ts); undefined when
   * it cannot now.
   */
  movable(session: LoadedSession, index: number): (() => void) | undefined {
    // One looking for another session itself can move: what it was sent and sent holds still
    // (the frame that differed waits); its search then finds the new session takes that frame.
    if (this.over || (this.pending !== undefined && !this.searching) || this.fault || !this.seat) return undefined;
    const t = fit(this.opts.protocol, (d) => this.tape.blob(d), this.current, session, this.progress());
    return typeof t === 'object' ? () => this.adopt(session, index, t) : undefined;
  }

  /** Goes on with `session` from where the replay is: its steps, its end, the ids the client knows in place of its own. */
  private adopt(session: LoadedSession, index: number | undefined, t: Takeover): void {
    this.current = session;
    this.end = session.end;
    const prepared = this.prepare(session);
    this.steps = prepared.steps;
    this.swap = t.swap.size > 0 ? t.swap : undefined;
    this.recordedIds = t.recordedIds;
    this.ahead = new Set(t.ahead);
    if (this.seat) this.seat.index = index;
    this.recut();
    this.unseeIds();
    if (t.owed.length > 0) {
      // Its server sent these before the client's frame at this point; the client was not sent
      // them (the session before sent them later): they go out now, before the rest.
      const all = [...prepared.prelude, ...prepared.steps.flatMap((st) => st.server)];
      const owed = t.owed.map((j) => all[j]!);
      this.play(owed, owed[0]!.ms);
    }
  }

  /**
   * Of server frames of step `step` from its frame `first` on, due now, those the client was
   * not sent already (see `ahead`).
   */
  private fresh(step: number, first: number, frames: readonly Played[]): readonly Played[] {
    if (this.ahead.size === 0) return frames;
    return frames.filter((_, k) => !this.ahead.delete(serverIndex(this.current, step, first + k)));
  }

  /** The session replayed changed: the ids it had are read again from its start. */
  private unseeIds(): void {
    this.seenIds = new Set();
    this.seenTo = -2;
  }

  /**
   * Where this client's frame (which keys as the recording's `recorded`) has an id other than
   * the one the recording has in its place, by where the ids come from (./issued-ids.ts).
   */
  private idDiffers(mine: unknown, recorded: unknown): IdDifference | undefined {
    const p = this.opts.protocol;
    while (this.seenTo < this.step - 1) {
      this.seenTo++;
      for (const id of idsOfStep(p, this.current, this.seenTo)) this.seenIds.add(id);
    }
    const seen = this.seenIds;
    const visible = (raw: string) => this.swap?.get(raw) ?? raw;
    let shown: Set<string> | undefined;
    const seenVisible = (id: string) => (shown ??= new Set([...seen].map(visible))).has(id);
    return idDifference(p, mine, recorded, (raw) => seen.has(raw), visible, seenVisible);
  }

  /**
   * The client sent what the session does not have (`sent`): the replay goes on with another
   * session where all the client saw holds (src/realtime/switch.ts), from `resume` (the frame,
   * or what is left of its audio, again); else the miss. Frames that come meanwhile wait.
   */
  private differs(msg: unknown, difference: string, sent: Sent, resume: () => void): void {
    const seat = this.seat;
    if (!seat || this.fault) return this.miss(msg, difference);
    this.pending = [];
    this.searching = true;
    const me = {
      occupant: this,
      current: () => this.current,
      index: () => this.seat?.index,
      fits: (to: LoadedSession) => fit(this.opts.protocol, (d) => this.tape.blob(d), this.current, to, this.progress(), sent),
      adopt: (to: LoadedSession, index: number | undefined, t: Takeover) => this.adopt(to, index, t),
      // A client gone meanwhile differed all the same: a miss, its place given back.
      alive: () => !this.over,
    };
    const settle = (o: Outcome): void => {
      const queued = this.pending ?? [];
      this.pending = undefined;
      this.searching = false;
      if (!o.moved) return this.miss(msg, difference, o.note, queued);
      // Its client left as the search ended: replayed as far as it went, its place stays served.
      if (this.over) {
        if (this.seat?.index !== undefined) this.seat.lineup.leave(this.seat.index, this);
        return;
      }
      resume();
      for (const [b, binary] of queued) this.fromClient(b, binary);
    };
    takeOver(seat.lineup, me, { strictOrder: this.tape.strictOrder, label: this.opts.label, frames: this.clientFrames }).then(settle, () => settle({ moved: false }));
  }

  /**
   * The injected fault: the close (1011) once the frames before it are out; the client's frames
   * after it are not answered. A faulted session uses up no recording: its place goes back, for
   * the reconnect whose frames choose it (chaos holds the session to tell that one by); it was
   * used all the same (its frames went out), so a prune keeps it.
   */
  private closeFaulted(): void {
    this.over = true;
    const fault = this.fault!;
    this.tape.sessionsReplayed--;
    this.tape.markUsed(this.current.head);
    if (this.seat?.index !== undefined) this.seat.lineup.putBack(this.seat.index, this);
    this.seat = undefined;
    const reason = closeReason(fault.reason);
    void this.clock.then(() => {
      const c = this.opts.client;
      fault.sent();
      if (c.readyState === c.OPEN) c.close(FAULT_CLOSE_CODE, reason);
    });
  }

  /** A server frame as it goes on the wire, its audio put back. */
  private played(f: Exclude<RealtimeFrame, { c: 1 }>): Played {
    const at = f.at !== undefined ? { at: f.at } : {};
    if ('blob' in f) return { ms: f.ms, data: Buffer.from(this.tape.blob(f.blob)), binary: true, ...at };
    const text = f.blobs ? f.text.replace(BLOB_REF, (_, d: string) => `"${Buffer.from(this.tape.blob(d)).toString('base64')}"`) : f.text;
    // Encoded once here, not on every send.
    return { ms: f.ms, data: Buffer.from(text), binary: f.binary === true, ...at, json: true };
  }

  /**
   * After a client frame matched its recording: ids the client made up (an item's `id`, a
   * `previous_item_id`) that differ from the recorded client's, so that the server frames echo
   * this client's ids, as the API would, not the recorded ones. Matching keys number the ids
   * alike (`#n` by first use), so the recorded id numbered `#n` is this client's `#n`.
   */
  private learnIds(recorded: unknown): void {
    const p = this.opts.protocol;
    p.frameKey(recorded, (raw) => {
      const n = this.recordedIds.id(raw);
      const mine = this.ids.rawOf(n);
      if (mine !== undefined && mine !== raw) (this.swap ??= new Map()).set(raw, mine);
      return n;
    });
  }

  /** A frame as this client gets it: the recorded client's ids replaced by its own. */
  private wire(f: Played): Buffer {
    if (this.swap === undefined || !f.json) return f.data;
    let t = f.data.toString('utf8');
    for (const [from, to] of this.swap) if (t.includes(`"${from}"`)) t = t.split(`"${from}"`).join(JSON.stringify(to));
    return Buffer.from(t);
  }

  /** Sends frames in order: at once, or at their recorded times after `base` (ms since connect). */
  private play(frames: readonly Played[], base: number): void {
    const timing = this.opts.timing ?? 'none';
    const client = this.opts.client;
    this.tape.framesReplayed += frames.length;
    if (this.opts.goLive) for (const f of frames) this.sentFrames.push(f);
    if (timing === 'none') {
      if (client.readyState !== client.OPEN || frames.length === 0) return;
      // One write for the frames of a step rather than one per frame (ws writes each frame to
      // the socket as it is sent).
      const socket = (client as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
      socket?.cork();
      for (const f of frames) client.send(this.wire(f), { binary: f.binary });
      if (socket) process.nextTick(() => socket.uncork());
      return;
    }
    let prev = base;
    for (const f of frames) {
      const gap = timing === 'recorded' ? Math.max(0, f.ms - prev) : timing;
      prev = f.ms;
      this.clock = this.clock.then(
        () =>
          new Promise<void>((r) =>
            setTimeout(() => {
              if (client.readyState === client.OPEN) client.send(this.wire(f), { binary: f.binary });
              r();
            }, gap),
          ),
      );
    }
  }

  /** Whether the session replayed now ends cut (the upstream went away, its recorder or client died, or the tape is damaged there), not still being recorded behind chaos's close. */
  private recordedCut(): boolean {
    return this.end ? this.end.cut === true : !this.opts.continues;
  }

  /**
   * Says why the replay cuts the connection (`when`), where the user looks (serve's stderr): a
   * dropped connection alone reads as a bug, and a client that changed what it sends next meets
   * the cut before any comparison.
   */
  private warnCut(when: string): void {
    const n = this.steps.length;
    const frames = `${n} client frame${n === 1 ? '' : 's'}`;
    const damaged = this.current.damaged;
    if (damaged !== undefined) this.tape.warn(`tapedeck: realtime session ${this.opts.label} in ${this.tape.location} is damaged after ${frames} (${damaged}), so the replay cuts the connection ${when}; record the session again: ${this.tape.recordCommand}`);
    else this.tape.warn(`tapedeck: realtime session ${this.opts.label} in ${this.tape.location} was recorded cut after ${frames} (the upstream or the recording client went away), so the replay cuts the connection (1006) ${when}; it has no more to replay: ${this.tape.recordCommand}`);
  }

  /**
   * After the last step: the server's own close, as recorded. A session the client closed, or
   * the recording proxy's shutdown ended (the recording run's end, not the API's), stays open
   * for the client to close. A cut one is cut here, once its last frames are out: the recording
   * client met the cut waiting for an answer it never got (its frames sent back to back reach
   * the tape with an earlier answer, the one in flight does not), and a replaying client would
   * wait for it forever. Not before the first frame of a connect it chooses the session of.
   */
  private maybeEnd(): void {
    if (this.step < this.steps.length || this.over) return;
    if (this.recordedCut()) {
      if (this.opts.choice && !this.started) return;
      this.over = true;
      this.warnCut('once it has sent what was recorded before the cut');
      void this.clock.then(() => cutClient(this.opts.client));
      return;
    }
    if (!this.end || this.end.by !== 'server' || this.end.cut) return;
    const { code, reason } = this.end;
    void this.clock.then(() => {
      const c = this.opts.client;
      if (c.readyState !== c.OPEN) return;
      if (code === 1005 || code === 1006) c.close();
      // Cut to a close frame's 123 bytes: a reason with a short secret masked grows.
      else c.close(code, closeReason(reason));
    });
  }

  private fromClient(b: Buffer, binary: boolean): void {
    if (this.over) {
      this.liveQueue?.push([b, binary]);
      return;
    }
    if (this.pending !== undefined) {
      this.pending.push([b, binary]);
      return;
    }
    if (!this.started) {
      this.started = true;
      if (this.opts.choice) {
        // Frames wait while the first one chooses the session, then go through in order.
        this.pending = [[b, binary]];
        void this.choose(b);
        return;
      }
    }
    this.clientFrames++;
    if (this.opts.goLive) this.log.push([b, binary]);
    const p = this.opts.protocol;
    const msg = parse(b);
    const audio = msg === undefined ? undefined : p.clientAudio(msg);
    // The frame again, once the replay goes on with another session (see differs).
    const again = () => {
      this.clientFrames--;
      if (this.opts.goLive) this.log.pop();
      this.fromClient(b, binary);
    };
    // Whether the frame holds ids: only then are they checked against those the session had.
    let hasIds = false;
    const key = audio
      ? undefined
      : msg === undefined
        ? hashValue({ binary: blobDigest(b) })
        : hashValue(
            p.frameKey(msg, (raw) => {
              hasIds = true;
              return this.ids.id(raw);
            }),
          );
    const bytes = audio ? Buffer.from(audio.base64, 'base64') : undefined;
    const sent: Sent = audio ? { stream: audio.stream, bytes: bytes! } : { key: key! };
    if (this.step >= this.steps.length) {
      // A session still being recorded (behind chaos's close): the client goes on live from here.
      if (!this.end && this.opts.continues) {
        this.over = true;
        return this.opts.continues(this.opts.client, b, binary, this.swap);
      }
      // The recorder was cut here (the upstream went away, or it died): so is the replay (a
      // session chosen by this connect's first frame that has no client frame of its own).
      if (this.recordedCut()) {
        this.over = true;
        this.opts.client.terminate();
        this.warnCut(`at the client's next frame (a ${msg === undefined ? `${b.length}-byte frame` : p.frameName(msg)})`);
        return;
      }
      return this.differs(msg, `the recording has no more client frames (it has ${this.steps.length}); the client sent a ${ordinal(this.clientFrames)}: ${msg === undefined ? `${b.length} bytes` : p.frameName(msg)}`, sent, again);
    }
    if (audio) return this.audio(msg, audio.stream, bytes!);
    const step = this.steps[this.step]!;
    const rec = step.client;
    if ('audio' in rec) {
      if (this.offset > 0) return this.differs(msg, `the audio ended after ${this.offset} bytes where the recording has ${rec.audio.bytes}; then came ${msg === undefined ? notJson(binary) : p.frameName(msg)}`, sent, again);
      return this.differs(msg, `${msg === undefined ? notJson(binary) : p.frameName(msg)} where the recording has ${rec.audio.bytes} bytes of audio (${rec.audio.stream})`, sent, again);
    }
    if (key !== rec.key) {
      if (msg !== undefined && 'msg' in rec) {
        // Masked as the recording's frame was: the connect's own key shows in neither side.
        const mine = (this.opts.asked ? echoing(this.tape.redactor, this.opts.asked) : this.tape.redactor).value(msg);
        const d = firstDifference(p.frameKey(mine, new Ids().id), p.frameKey(rec.msg, new Ids().id));
        // Ids are compared renumbered (`#1`): the client's own id is what it knows, where it is.
        const own = (v: unknown, from: unknown) => (typeof v === 'string' && /^#\d+$/.test(v) && d ? (valueAt(from, d.path) ?? v) : v);
        // Equal once masked: what differs is a secret, in one of the masked places (the first named).
        const secretAt = d ? undefined : maskedPath(mine);
        const where = d ? `${d.path} differs, ${shown(own(d.got, mine))} vs ${shown(own(d.recorded, rec.msg))}` : secretAt ? `${secretAt} differs (a secret, masked on both sides)` : 'differs (in a secret)';
        return this.differs(msg, `client frame ${this.clientFrames} (${p.frameName(msg)}): ${where} in the recording`, sent, again);
      }
      const theirs = 'msg' in rec ? p.frameName(rec.msg) : notJson(rec.asText !== true);
      return this.differs(msg, `client frame ${this.clientFrames} (${msg === undefined ? notJson(binary) : p.frameName(msg)}) differs from the recording's (${theirs})${msg === undefined && 'blob' in rec ? this.bytesDiffer(b, !binary && rec.asText === true, rec.blob) : ''}`, sent, again);
    }
    if (hasIds && 'msg' in rec) {
      // Keyed alike, but an id where the recording's client echoed the server's (a call's
      // call_id) is another one, or one the server never issued: the API would refuse it, so
      // the recorded answer is not this frame's. A miss, never a switch: any session that has
      // this frame has it with the ids its own server sent.
      const d = this.idDiffers(msg, rec.msg);
      if (d) {
        const known = (id: string) => [...this.seenIds].some((r) => (this.swap?.get(r) ?? r) === id);
        const what =
          d.want === undefined
            ? 'an id the session had already, where the recording has one its client made up'
            : `the recording has ${shown(d.want)} there, the id the server sent (this client sends one the server ${known(d.got) ? 'sent for something else' : 'never sent'})`;
        return this.miss(msg, `client frame ${this.clientFrames} (${p.frameName(msg)}): ${d.path} differs, ${shown(d.got)}: ${what}`);
      }
    }
    if ('msg' in rec) this.learnIds(rec.msg);
    this.step++;
    if (this.cut?.step === this.step - 1 && this.faulted()) {
      this.play(this.fresh(this.step - 1, 0, step.server.slice(0, this.cut!.frames)), rec.ms);
      return this.closeFaulted();
    }
    this.play(this.fresh(this.step - 1, 0, step.server), rec.ms);
    this.maybeEnd();
  }

  /**
   * Where a client frame that is not JSON differs from the recorded one (stored as `blob`): both
   * texts (`text`: both were text frames), else the first byte that differs.
   */
  private bytesDiffer(mine: Buffer, text: boolean, blob: string): string {
    const recorded = Buffer.from(this.tape.blob(blob));
    if (text) return `: ${shown(mine.toString('utf8'))} vs ${shown(recorded.toString('utf8'))}`;
    let i = 0;
    while (i < mine.length && i < recorded.length && mine[i] === recorded[i]) i++;
    return `: they differ at byte ${i} (${mine.length} bytes; the recording's ${recorded.length})`;
  }

  /** Client audio: compared byte for byte with the recorded run(s), server frames sent as it catches up. */
  private audio(msg: unknown, stream: string, bytes: Buffer): void {
    let rest = bytes;
    while (rest.length > 0) {
      const step = this.steps[this.step];
      // What is left of the chunk, once the replay goes on with another session (see differs).
      const left = rest;
      const again = () => this.audio(msg, stream, left);
      if (!step || !('audio' in step.client) || step.client.audio.stream !== stream) {
        const what = !step ? 'nothing more' : 'audio' in step.client ? `audio of ${step.client.audio.stream}` : 'msg' in step.client ? this.opts.protocol.frameName(step.client.msg) : 'binary data';
        return this.differs(msg, `${rest.length} more bytes of audio (${stream}) where the recording has ${what}`, { stream, bytes: rest }, again);
      }
      const rec = this.tape.blob(step.client.audio.blob);
      const n = Math.min(rest.length, rec.length - this.offset);
      const mine = rest.subarray(0, n);
      if (!mine.equals(rec.subarray(this.offset, this.offset + n))) {
        let i = 0;
        while (mine[i] === rec[this.offset + i]) i++;
        return this.differs(msg, `the audio differs from the recording at byte ${this.offset + i} of ${rec.length} (${stream})`, { stream, bytes: rest }, again);
      }
      this.offset += n;
      rest = rest.subarray(n);
      const due: Played[] = [];
      const first = this.sent;
      // A faulted session stops at its cut, in the middle of this step's frames.
      const cutHere = this.cut?.step === this.step && this.faulted();
      const last = cutHere ? this.cut!.frames : step.server.length;
      while (this.sent < last) {
        const f = step.server[this.sent]!;
        if (this.offset < rec.length && (f.at === undefined || f.at > this.offset)) break;
        due.push(f);
        this.sent++;
      }
      this.play(this.fresh(this.step, first, due), step.client.ms);
      if (cutHere && (this.sent >= last || this.offset === rec.length)) return this.closeFaulted();
      if (this.offset === rec.length) {
        this.step++;
        this.offset = 0;
        this.sent = 0;
        this.maybeEnd();
        // Cut there (a session recorded cut): the rest of the chunk meets the cut, not a miss.
        if (this.over) return;
      }
    }
  }

  /**
   * The miss in the provider's shape, then the close; the full report to the tape's warnings.
   * `note`: a session that has the client's frames, named in place of how to re-record.
   */
  private miss(msg: unknown, difference: string, note?: string, queued: [Buffer, boolean][] = []): void {
    this.over = true;
    // Counted as replayed at connect: a session that misses is a miss, not also a replayed
    // session in the stats and serve's closing line.
    this.tape.sessionsReplayed--;
    // A miss uses up no recording: the session goes back for a later connect whose frames fit.
    if (this.seat?.index !== undefined) this.seat.lineup.putBack(this.seat.index, this);
    this.seat = undefined;
    // Update mode: a session the tape does not have is recorded, from where the recordings
    // stopped answering it (the frame that differed is the last one taken).
    if (this.opts.goLive && this.log.length > 0) {
      const go = this.opts.goLive;
      const from: GoLive = { answered: this.log.slice(0, -1), rest: [this.log[this.log.length - 1]!, ...queued], sent: this.sentFrames, prelude: this.prelude.length, swap: this.swap };
      this.liveQueue = from.rest;
      void this.clock.then(() => {
        this.liveQueue = undefined;
        go(this.opts.client, from);
      });
      return;
    }
    // The recording has what the client sent, in another session: nothing to record again.
    const fix = note ?? (this.note !== undefined && this.clientFrames === 1 ? this.note : (this.opts.missHint ?? this.tape.recordCommand));
    const message = `tapedeck miss: ${difference}; ${fix}`;
    const report = `tapedeck: realtime miss in ${this.tape.location}: ${this.opts.label}: ${difference}\n  ${fix}`;
    this.tape.miss(this.opts.protocol.provider, message, report);
    (this.opts.onMiss ?? ((r: string) => this.tape.warn(r)))(report);
    sendMiss(this.opts.client, this.opts.protocol, message, msg, this.clock);
  }
}

/**
 * Sends a miss in the provider's shape and closes: after `before` (frames still being paced).
 *
 * @example
 * sendMiss(ws, protocol, 'tapedeck miss: no recording of this session; re-record: ...')
 */
export function sendMiss(client: WebSocket, protocol: RealtimeProtocol, message: string, clientFrame?: unknown, before: Promise<void> = Promise.resolve()): void {
  const answer = protocol.miss(message, clientFrame);
  void before.then(() => {
    if (client.readyState !== client.OPEN) return;
    for (const f of answer.frames) client.send(f);
    client.close(answer.close.code, closeReason(answer.close.reason));
  });
}

/**
 * Drops a client's connection without a close frame (it sees 1006), as a cut upstream drops it.
 * terminate() destroys the socket and loses what is still being written (the last frames of a
 * step, corked by play()): the socket is ended instead, which sends them first; a client that
 * does not end its side within a second is terminated.
 */
function cutClient(client: WebSocket): void {
  if (client.readyState !== client.OPEN) return;
  const socket = (client as unknown as { _socket?: { end(): void } })._socket;
  if (!socket) return client.terminate();
  socket.end();
  setTimeout(() => client.terminate(), 1000).unref();
}

/** The close code of a session whose upstream failed (the IANA registry's 1014, Bad Gateway): not a miss's. */
export const UPSTREAM_FAILED_CLOSE_CODE = 1014;

/**
 * Tells a client its session cannot go on because the upstream failed (refused it, could not be
 * reached): in the provider's shape as a miss is (OpenAI: an `error` event), then a close with
 * 1014, so a client tells "not recorded" (1008) from "upstream down". Where the provider says
 * it in the close reason (Gemini), the message is the reason: put the cause first.
 *
 * @example
 * sendUpstreamFailure(ws, protocol, 'tapedeck: the upstream refused the session (it answered HTTP 401): ...')
 */
export function sendUpstreamFailure(client: WebSocket, protocol: RealtimeProtocol, message: string): void {
  const answer = protocol.miss(message);
  if (client.readyState !== client.OPEN) return;
  for (const f of answer.frames) client.send(f);
  client.close(UPSTREAM_FAILED_CLOSE_CODE, closeReason(answer.close.reason === message ? message : 'tapedeck: the upstream failed: see the error event'));
}

/** A TapedeckError's text without a stack, for a close reason or an error event. */
export function errorText(e: unknown): string {
  return e instanceof TapedeckError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}
