/**
 * Realtime sessions on the proxy's port: a WebSocket upgrade on a route a provider speaks
 * realtime on (src/providers/realtime.ts) becomes a session, replayed from the tape or forwarded
 * to the upstream and recorded. Opens its tape on the first upgrade, on the same store as the
 * proxy's HTTP recordings.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Chaos, ChaosCall } from '../chaos/decide.ts';
import { refuseChaos } from '../chaos/refused.ts';
import { CHAOS_HEADER, type FaultName, type RealtimeFault } from '../chaos/options.ts';
import { hashValue } from '../core/index.ts';
import { realtimeProtocolFor, type RealtimeProtocol } from '../providers/realtime.ts';
import { firstFrameChoice, type FirstFrameChoice } from './choice.ts';
import { connectDifference } from './connect-miss.ts';
import { firstFrameDistance } from './nearest-frame.ts';
import type { BehindFault, Continue, LiveFault } from './live-cut.ts';
import type { RealtimeSessionOptions } from './session.ts';
import { FAULT_CLOSE_CODE, LiveSession, ReplaySession, asBuffer, errorText, firstFrameKey, sendMiss, sendUpstreamFailure, type Data, type ReplayChaos } from './session.ts';
import { RealtimeTape, type HeadTurn, type LoadedSession, type RealtimeTapeOptions, type RealtimeTiming } from './tape.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';
import { checkRedactOptions, REDACT_INNER } from '../store/redact-options.ts';
import type { EchoSource } from '../store/echo-redact.ts';
import { withoutTrailingSlashes } from '../store/upstream-prefix.ts';

/**
 * Options of RealtimeEndpoint: the tape and its mode, the live provider, replay pacing and chaos.
 */
export interface RealtimeEndpointOptions extends RealtimeTapeOptions {
  /** Base URL of the live provider (`https://api.openai.com`); `http(s):` becomes `ws(s):`. */
  upstream?: string;
  /** Replay pacing: everything at once (default), as recorded, or a fixed gap in ms between frames. */
  timing?: RealtimeTiming;
  /**
   * Faults on demand (docs/chaos.md, "Realtime sessions"), asked for at each connect (the
   * proxy's settings can change between sessions): a replayed session is cut from its
   * recording, one recorded now is cut as its replay will be (./live-cut.ts). Undefined: no
   * chaos, and an `x-tapedeck-chaos` header is refused outside replay.
   */
  chaos?: () => Chaos<LoadedSession> | undefined;
}

const ENDPOINT_OPTIONS = optionNames<RealtimeEndpointOptions>()(['tape', 'mode', 'redact', 'durable', 'onWarning', 'run', 'test', 'strictOrder', 'recordCommand', 'upstream', 'timing', 'chaos']);

/** Realtime traffic counters, in the proxy's stats. */
export interface RealtimeStats {
  open: number;
  replayed: number;
  recorded: number;
  misses: number;
  framesReplayed: number;
  framesRecorded: number;
}

// Headers of the client's handshake that belong to its own connection, not to the upstream's.
// The chaos header is tapedeck's own: never sent on.
const HOP = new Set([CHAOS_HEADER, 'host', 'connection', 'upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol', 'content-length', 'keep-alive', 'transfer-encoding', 'proxy-connection']);

/**
 * Whether an upgrade request is for a realtime route tapedeck records.
 *
 * @example
 * isRealtimeUpgrade(req) // true for GET /v1/realtime?model=gpt-realtime with Upgrade: websocket
 */
export function isRealtimeUpgrade(req: IncomingMessage): boolean {
  return String(req.headers.upgrade ?? '').toLowerCase() === 'websocket' && realtimeProtocolFor(upgradeUrl(req)) !== undefined;
}

/**
 * An upgrade request's path and query. Leading slashes count as one: @google/genai given an
 * http: base URL ending in a slash sends `//ws/...`, which URL would read as the host `ws` (the
 * segment then lost upstream, where Google serves only `/ws/...`, and in the session's key).
 */
function upgradeUrl(req: IncomingMessage): URL {
  return new URL((req.url ?? '/').replace(/^\/+/, '/'), 'http://x');
}

/** The connect as stored: path and query without secret parameters. */
function safeUrl(url: URL, protocol: RealtimeProtocol): string {
  const q = new URLSearchParams();
  for (const [k, v] of url.searchParams) if (!protocol.secretQuery.includes(k.toLowerCase())) q.append(k, v);
  const s = q.toString();
  return s ? `${url.pathname}?${s}` : url.pathname;
}

/**
 * Records and replays realtime WebSocket sessions (OpenAI Realtime, Gemini Live) on upgrade
 * requests of your own server.
 *
 * @example
 * const rt = new RealtimeEndpoint({ tape: 'voice.tape', mode: 'replay' })
 * server.on('upgrade', (req, socket, head) => rt.upgrade(req, socket, head))
 */
export class RealtimeEndpoint {
  private readonly opts: RealtimeEndpointOptions;
  private tapeP: Promise<RealtimeTape> | undefined;
  private opened: RealtimeTape | undefined;
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (set, req) => (req as { chosen?: string | false }).chosen ?? false });
  private readonly live = new Set<LiveSession>();
  private readonly sockets = new Set<WebSocket>();
  /** Per connect key, sessions recorded behind chaos's close waiting for their reconnects. */
  private readonly behind = new Map<string, Behind[]>();
  private closing = false;
  /** Connects whose upstream could not be reached or refused them (upstreamFailed). */
  private upstreamFailures = 0;

  constructor(opts: RealtimeEndpointOptions) {
    // A misspelt option (`mdoe`) or redact rule would be dropped without a word. Checked here,
    // not where the tape opens: that is at the first session, long after the endpoint is made.
    checkOptionNames(opts, ENDPOINT_OPTIONS, 'RealtimeEndpoint', 'docs/realtime.md', REDACT_INNER);
    checkRedactOptions(opts.redact);
    this.opts = opts;
  }

  private tape(): Promise<RealtimeTape> {
    this.tapeP ??= RealtimeTape.open(this.opts).then((t) => (this.opened = t));
    return this.tapeP;
  }

  /** Takes an upgrade request; false when it is not a realtime route (the caller answers it). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = upgradeUrl(req);
    const protocol = realtimeProtocolFor(url);
    if (!protocol || String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return false;
    socket.on('error', () => {});
    this.tape()
      .then((tape) => this.open(tape, protocol, url, req, socket, head))
      .catch((e: unknown) => refuse(socket, 500, errorText(e)));
    return true;
  }

  private async open(tape: RealtimeTape, protocol: RealtimeProtocol, url: URL, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (this.closing) return refuse(socket, 503, 'tapedeck is shutting down');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const kept = offered.filter((p) => !protocol.secretProtocol(p));
    const key = hashValue(protocol.openKey(url, req.headers, kept));
    // The session's place among those of its key is taken now, in the order clients connect
    // (the reads and the upstream handshake below take their own time); a connect that records
    // nothing gives it up.
    const place: Place = { turn: tape.records ? tape.headTurn(key) : undefined, handedOn: false };
    try {
      await this.route(tape, protocol, url, req, socket, head, offered, kept, key, place);
    } finally {
      if (!place.handedOn) place.turn?.skip();
    }
  }

  /** Serves, records or refuses a connect (see open()); a connect that goes live takes `place`. */
  private async route(tape: RealtimeTape, protocol: RealtimeProtocol, url: URL, req: IncomingMessage, socket: Duplex, head: Buffer, offered: string[], kept: string[], key: string, place: Place): Promise<void> {
    // The provider's keys left out, then what the tape's redaction masks (a `?token=`, the user's
    // redact.query names) masked as in an HTTP request's stored URL.
    const stored = tape.redactor.url(safeUrl(url, protocol));
    const label = `${req.method ?? 'GET'} ${stored}`;
    // `asked`: the connect's own secrets, masked in what a session stores and what a miss shows.
    const base: Omit<RealtimeSessionOptions, 'client'> = { tape, protocol, label, timing: this.opts.timing, asked: askedBy(req, offered, protocol) };
    // Update mode: a replayed connect whose frames differ from every recorded session goes on live, recorded.
    if (tape.mode === 'update' && this.opts.upstream) base.goLive = this.goLive(tape, protocol, base, key, label, req, url, offered, stored, kept);
    let faults: ConnectChaos | undefined;
    try {
      faults = this.connectChaos(tape, key, req.headers[CHAOS_HEADER]);
    } catch (e) {
      return refuse(socket, 400, errorText(e));
    }
    if (faults && tape.records) {
      // The reconnect after chaos's close on a session recorded now (record mode; update mode,
      // for a connect the tape had none of) replays the session recorded behind the fault and
      // goes on live in it, as HTTP's retry of a cut call gets the answer recorded behind the
      // cut: never a second live session (./live-cut.ts).
      const behind = this.takeBehind(faults, key);
      if (behind) return this.resumeBehind(req, socket, head, kept, base, faults, behind);
    }
    if (tape.serves && protocol.firstFrameChooses) {
      return this.accept(req, socket, head, kept[0], (client) => this.chooseByFirstFrame(tape, protocol, base, key, label, client, req, url, offered, stored, kept, faults));
    }
    if (tape.serves) {
      let session: LoadedSession | undefined;
      let choice: FirstFrameChoice | undefined;
      // The session's place among the connect's: a miss (or chaos's close) gives it back, a
      // frame that differs may go on with another (src/realtime/switch.ts).
      let seat: RealtimeSessionOptions['seat'];
      try {
        // The opening of the next session in order goes out now; the client's first frame
        // then chooses among the sessions that opened alike (src/realtime/choice.ts). One
        // without a client frame has nothing to wait for: it is this connect's. A connect chaos
        // may fault chooses as any other: the fault, and whose reconnect it is, is settled at
        // the cut, by the session its frames chose (faultsOf).
        const ticket = await tape.reserve(key);
        session = ticket?.session;
        if (ticket && session?.frames.some((f) => 'c' in f)) {
          const c = (choice = firstFrameChoice(tape, protocol, key, label, ticket));
          seat = { lineup: tape.lineup(key)! };
          // A handshake that never completes holds no session (after a choice, this does nothing).
          socket.once('close', () => c.release());
        } else if (ticket) {
          const took = await tape.lineup(key)!.take(ticket);
          session = took.session;
          seat = { lineup: tape.lineup(key)!, ...(took.index === undefined ? {} : { index: took.index }) };
        }
      } catch (e) {
        // A damaged recording: this connect's session is lost, never another connect's given instead.
        return this.accept(req, socket, head, kept[0], (client) => sendMiss(client, protocol, `tapedeck: ${errorText(e)}`));
      }
      if (session) return this.serveRecorded(req, socket, head, kept, base, session, faults && this.faultsOf(faults, key, label), choice, seat);
    }
    if (tape.serves && tape.mode === 'replay') {
      // --strict-order, and every session of this connect was taken: not a connect that differs.
      const places = tape.strictOrder ? (tape.lineup(key)?.places() ?? []) : [];
      if (places.length > 0) {
        const n = places.length;
        const taken = places.every((p) => p.served) ? 'replayed already' : 'replayed already, or held by connects waiting for their first frame';
        const message = usedUp(tape, protocol, `no recording of this session left (${label})`, `the ${n === 1 ? '1 session' : `${n} sessions`} recorded for this connect ${n === 1 ? 'was' : 'were'} ${taken} (${STRICT})`);
        return this.accept(req, socket, head, kept[0], (client) => sendMiss(client, protocol, message));
      }
      // A fault needs a recording to cut: a miss is answered as a miss (no fault drawn for it).
      const other = tape.exists ? connectDifference(tape.sessionHeads(), stored, kept, req.headers) : undefined;
      const message = noRecording(tape, protocol, tape.exists ? `no recording of this session (${label})${other ? `: ${other}` : ''}` : `no tape at ${tape.location}`);
      return this.accept(req, socket, head, kept[0], (client) => sendMiss(client, protocol, message));
    }
    if (!this.opts.upstream) return refuse(socket, 502, `tapedeck: no upstream to forward ${label} to (give --upstream).`);
    // A session recorded now is cut as its replay will be, the session stored whole behind the
    // fault for the reconnect (./live-cut.ts); one that records nothing (passthrough) is not
    // faulted, no fault drawn for it.
    const liveFault = faults && tape.records ? this.liveFault(faults, key, label) : undefined;
    const { up, target } = this.upstreamSocket(this.opts.upstream, url, req, offered);
    // The place goes with the upstream socket: to the session if it opens and the client is
    // accepted, given up if either goes away first (skip() after append() does nothing).
    const turn = place.turn;
    place.handedOn = true;
    up.once('close', () => turn?.skip());
    socket.once('close', () => turn?.skip());
    // A session that never opened, or ended before its cut, was not faulted (after the cut, this does nothing).
    up.once('close', () => liveFault?.missed());
    socket.once('close', () => liveFault?.missed());
    up.on('unexpected-response', (_r, res) => {
      // The upstream refused the handshake (401, 404...): the client gets that answer, nothing is recorded.
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => refuse(socket, res.statusCode ?? 502, Buffer.concat(parts).toString(), String(res.headers['content-type'] ?? 'text/plain')));
      this.upstreamFailed(target, `it answered HTTP ${res.statusCode ?? 502}`);
      res.on('error', () => refuse(socket, 502, 'the upstream refused the WebSocket'));
    });
    up.on('error', (e) => {
      if (up.readyState === up.OPEN) return;
      this.upstreamFailed(target, e.message);
      refuse(socket, 502, `tapedeck: the upstream WebSocket ${target.origin}${target.pathname} failed: ${e.message}`);
    });
    up.once('open', () => {
      this.accept(req, socket, head, up.protocol || undefined, (client) => {
        const s = new LiveSession({ ...base, client, asked: askedBy(req, offered, protocol), onDone: () => this.live.delete(s), ...(liveFault ? { liveFault } : {}) }, up, key, { url: stored, protocols: kept }, turn);
        this.live.add(s);
      });
    });
  }

  /**
   * Says on the tape's warning channel (serve's stderr) that the upstream of a connect could not
   * be reached or refused it: the client's SDK shows only the status it was answered with.
   */
  private upstreamFailed(target: URL, why: string): void {
    // Numbered: the proxy's warning channel says a repeated line once, and each connect failed.
    const n = ++this.upstreamFailures;
    this.opened?.warn(`tapedeck: realtime connect to the upstream ${target.origin}${target.pathname} failed: ${why}; the client was answered with the failure, nothing recorded (failed upstream connect ${n}).`);
  }

  /**
   * How a replayed connect goes on live in update mode (RealtimeSessionOptions.goLive): an
   * upstream session is opened for it and recorded as a new session of the key, brought to where
   * the replay left the client first (./catch-up.ts). The client's frames wait for it meanwhile;
   * an upstream that cannot be reached is told as a miss.
   */
  private goLive(tape: RealtimeTape, protocol: RealtimeProtocol, base: Omit<RealtimeSessionOptions, 'client'>, key: string, label: string, req: IncomingMessage, url: URL, offered: string[], stored: string, kept: string[]): NonNullable<RealtimeSessionOptions['goLive']> {
    return (client, from) => {
      if (client.readyState !== client.OPEN || this.closing) return;
      const early: [Buffer, boolean][] = [];
      const hold = (d: Data, isBinary: boolean): void => void early.push([asBuffer(d), isBinary]);
      client.on('message', hold);
      const turn = tape.headTurn(key);
      const { up, target } = this.upstreamSocket(this.opts.upstream!, url, req, offered);
      up.once('close', () => turn.skip());
      client.once('close', () => {
        turn.skip();
        if (up.readyState === up.CONNECTING) up.terminate();
      });
      const failed = (why: string): void => {
        client.off('message', hold);
        this.upstreamFailed(target, why);
        // The cause first: a Gemini client has only the close reason's 123 bytes.
        sendUpstreamFailure(client, protocol, `tapedeck: the upstream ${refused ? 'refused the session' : 'failed'} (${why}), so this session, which the tape has no recording of, cannot go on live: ${target.origin}${target.pathname} (${label})`);
      };
      let refused = false;
      up.on('unexpected-response', (_r, res) => {
        res.resume();
        refused = true;
        failed(`it answered HTTP ${res.statusCode ?? 502}`);
      });
      up.on('error', (e) => {
        if (up.readyState !== up.OPEN && !refused) failed(e.message);
      });
      up.once('open', () => {
        client.off('message', hold);
        if (client.readyState !== client.OPEN) return up.close();
        const s = new LiveSession({ ...base, client, asked: askedBy(req, offered, protocol), onDone: () => this.live.delete(s), catchUp: from }, up, key, { url: stored, protocols: kept }, turn);
        this.live.add(s);
        for (const [b, isBinary] of [...from.rest, ...early]) s.receive(b, isBinary);
      });
    };
  }

  /**
   * The fault of a session recorded now, drawn as a new call of the key (a reconnect never goes
   * live: takeBehind), and settled once: injected at its cut (the session recorded behind it
   * held for the reconnect; counted and, the first, announced; the reconnect may come now), or
   * taken back when the session ended before its first response completed, as an HTTP fault
   * with no stored answer to damage is. Undefined when no fault is drawn.
   */
  private liveFault(faults: ConnectChaos, key: string, label: string): LiveFault | undefined {
    const { chaos, force } = faults;
    const v = chaos.decide(key, force, label, { tellsSent: true, call: null });
    const name = v?.fault as RealtimeFault | undefined;
    if (!v || !name) return undefined;
    const call = v.call;
    let settled = false;
    return {
      reason: faultReason(name, chaos.seed),
      injected: (behind) => {
        if (settled) return;
        settled = true;
        if (behind) {
          let list = this.behind.get(key);
          if (!list) this.behind.set(key, (list = []));
          list.push({ chaos, call, behind, busy: false });
        }
        chaos.injected(name, label);
        chaos.sent(call);
      },
      missed: () => {
        if (settled) return;
        settled = true;
        chaos.undo(call, name);
      },
    };
  }

  /**
   * The session recorded behind a fault whose reconnect this connect is: the oldest of its key
   * whose fault is out and that no other connect replays now (sessions recorded behind faults
   * wait for their reconnects in the order they were cut). Marked busy until its replay ends.
   */
  private takeBehind(faults: ConnectChaos, key: string): Behind | undefined {
    const list = this.behind.get(key);
    if (!list) return undefined;
    // A fault whose reconnect was answered (or another chaos since) holds nothing any more.
    const open = list.filter((b) => b.chaos === faults.chaos && b.chaos.isOpen(b.call));
    if (open.length === 0) this.behind.delete(key);
    else this.behind.set(key, open);
    const b = open.find((x) => x.call.out && !x.busy);
    if (b) b.busy = true;
    return b;
  }

  /**
   * The reconnect after chaos's close on a session recorded now: it replays what is recorded so
   * far (cut again if chaos says so: its own attempt), then goes on live in the same upstream
   * session, recorded as the session's continuation (./live-cut.ts, BehindFault).
   */
  private resumeBehind(req: IncomingMessage, socket: Duplex, head: Buffer, kept: string[], base: Omit<RealtimeSessionOptions, 'client'>, faults: ConnectChaos, b: Behind): void {
    const { session, continues } = b.behind.resume();
    const { chaos, force } = faults;
    const label = base.label;
    const key = b.call.key;
    let handedOver = false;
    const replayChaos: ReplayChaos = {
      decide: () => {
        const v = chaos.decide(key, force, label, { tellsSent: true, call: b.call });
        if (!v?.fault) return undefined;
        chaos.injected(v.fault, label);
        return { reason: faultReason(v.fault as RealtimeFault, chaos.seed), sent: () => chaos.sent(v.call) };
      },
    };
    base.tape.sessionsReplayed++;
    this.accept(req, socket, head, session.head.protocols.find((p) => kept.includes(p)) ?? kept[0], (client) => {
      // Ended without going on live (a miss, its client gone, cut again): the session waits for the next reconnect.
      client.once('close', () => {
        if (!handedOver) b.busy = false;
      });
      const go: Continue | undefined = continues
        ? (c, frame, binary, swap) => {
            handedOver = true;
            // Counted as the session recorded, not also as one replayed.
            base.tape.sessionsReplayed--;
            continues(c, frame, binary, swap);
          }
        : undefined;
      try {
        // A reconnect that differs is a miss in every mode (never a second live session).
        const { goLive: _, ...once } = base;
        new ReplaySession({ ...once, client, chaos: replayChaos, missHint: RECONNECT_DIFFERS, ...(go ? { continues: go } : {}) }, session);
      } catch (e) {
        sendMiss(client, base.protocol, `tapedeck: ${errorText(e)}`);
      }
    });
  }

  /**
   * Chaos for a replayed session of the connect: asked at the session's cut (ReplaySession),
   * with the session the connect's frames chose there. A connect replaying the session a fault
   * is held for (a faulted connect's, given back) is that fault's reconnect; any other is a new
   * call of the key. A faulted one holds its session for its own reconnect.
   */
  private faultsOf(faults: ConnectChaos, key: string, label: string): ReplayChaos {
    const { chaos, force } = faults;
    return {
      decide: (session) => {
        const retried = chaos.openCall(key, (held) => held === session);
        const v = chaos.decide(key, force, label, { tellsSent: true, call: retried ?? null });
        if (!v?.fault) return undefined;
        chaos.hold(v.call, session);
        chaos.injected(v.fault, label);
        return { reason: faultReason(v.fault as RealtimeFault, chaos.seed), sent: () => chaos.sent(v.call) };
      },
    };
  }

  /**
   * Replays a recorded session to the connect, whole unless chaos cuts it (`faults`: asked at
   * the cut). `choice`, `seat`: see RealtimeSessionOptions.
   */
  private serveRecorded(req: IncomingMessage, socket: Duplex, head: Buffer, kept: string[], base: Omit<RealtimeSessionOptions, 'client'>, s: LoadedSession, faults: ReplayChaos | undefined, choice?: FirstFrameChoice, seat?: RealtimeSessionOptions['seat']): void {
    base.tape.sessionsReplayed++;
    this.accept(req, socket, head, s.head.protocols.find((p) => kept.includes(p)) ?? kept[0], (client) => {
      try {
        new ReplaySession({ ...base, client, ...(faults ? { chaos: faults } : {}), ...(choice ? { choice } : {}), ...(seat ? { seat } : {}) }, s);
      } catch (e) {
        choice?.release();
        sendMiss(client, base.protocol, `tapedeck: ${errorText(e)}`);
      }
    });
  }

  /** A WebSocket to the upstream for this connect: the path as the client sent it (leading slashes as one) after the upstream's own. */
  private upstreamSocket(upstream: string, url: URL, req: IncomingMessage, offered: string[]): { up: WebSocket; target: URL } {
    const target = new URL(upstream);
    target.pathname = `${withoutTrailingSlashes(target.pathname)}${url.pathname}`;
    target.search = url.search;
    target.protocol = target.protocol === 'https:' || target.protocol === 'wss:' ? 'wss:' : 'ws:';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    return { up: new WebSocket(target, offered, { headers, perMessageDeflate: false }), target };
  }

  /** A replayed session on an accepted client (`seat`: its place among the connect's); a recording that cannot be replayed is told as a miss. */
  private replay(base: Omit<RealtimeSessionOptions, 'client'>, client: WebSocket, session: LoadedSession, seat?: RealtimeSessionOptions['seat'], faults?: ReplayChaos): ReplaySession | undefined {
    try {
      return new ReplaySession({ ...base, client, ...(seat ? { seat } : {}), ...(faults ? { chaos: faults } : {}) }, session);
    } catch (e) {
      sendMiss(client, base.protocol, `tapedeck: ${errorText(e)}`);
      return undefined;
    }
  }

  /**
   * A connect whose first frame chooses its session (Gemini's `setup` names the model): the
   * client is accepted, and its first frame picks the first session of the connect not served
   * yet that opened with the same frame. Without one: in replay, a miss told against the next
   * session (which stays unserved); in update mode, the session goes live and is recorded.
   */
  private chooseByFirstFrame(tape: RealtimeTape, protocol: RealtimeProtocol, base: Omit<RealtimeSessionOptions, 'client'>, key: string, label: string, client: WebSocket, req: IncomingMessage, url: URL, offered: string[], stored: string, kept: string[], faults: ConnectChaos | undefined): void {
    // Frames that come while the session is chosen (the tape read, the upstream opened) are held
    // and handed to the session in order, the first one with them.
    const early: [Buffer, boolean][] = [];
    const hold = (d: Data, isBinary: boolean): void => {
      early.push([asBuffer(d), isBinary]);
      if (early.length === 1) void choose();
    };
    client.on('message', hold);
    const handOver = (s: { receive(b: Buffer, binary: boolean): void } | undefined): void => {
      client.off('message', hold);
      if (s) for (const [b, isBinary] of early.splice(0)) s.receive(b, isBinary);
    };
    const choose = async (): Promise<void> => {
      const [b] = early[0]!;
      const first = firstFrameKey(protocol, b);
      let chosen: { session: LoadedSession; matched: boolean; index?: number; replayed?: number } | undefined;
      try {
        // A miss is told against the recorded first frame nearest this one, masked as stored.
        if (first !== undefined) chosen = await tape.chooseSession(key, first, firstFrameDistance(protocol, () => tape.redactor.value(JSON.parse(b.toString('utf8')))));
        else {
          // A first frame that cannot choose (audio, binary): the connect's sessions in order.
          const next = await tape.nextPlace(key);
          chosen = next ? { ...next, matched: true } : undefined;
        }
      } catch (e) {
        handOver(undefined);
        return sendMiss(client, protocol, `tapedeck: ${errorText(e)}`);
      }
      if (chosen?.replayed !== undefined) {
        // --strict-order, and the sessions that start with this frame were replayed: said first,
        // as the client may have only a close reason's 123 bytes.
        const name = protocol.frameName(JSON.parse(b.toString('utf8')));
        handOver(undefined);
        return sendMiss(client, protocol, usedUp(tape, protocol, `client frame 1 (${name}) was replayed already`, `${STRICT} (session ${chosen.replayed + 1} of ${label} starts with this ${name})`));
      }
      if (chosen && (chosen.matched || tape.mode === 'replay')) {
        // Counted as every replayed session is; one told as a miss is taken back (ReplaySession.miss).
        tape.sessionsReplayed++;
        // A session the frame chose is this connect's (one a miss is told against is not).
        const seat = chosen.matched ? { lineup: tape.lineup(key)!, ...(chosen.index === undefined ? {} : { index: chosen.index }) } : undefined;
        return handOver(this.replay(base, client, chosen.session, seat, faults && this.faultsOf(faults, key, label)));
      }
      if (tape.mode === 'replay' || !this.opts.upstream) {
        const message = noRecording(tape, protocol, !tape.exists ? `no tape at ${tape.location}` : this.opts.upstream ? `no recording of this session (${label})` : `no recording of this session (${label}), and no upstream to record it from (give --upstream)`);
        handOver(undefined);
        return sendMiss(client, protocol, message);
      }
      // Update mode, a session the tape does not have: live from its first frame, recorded. Its
      // place among the sessions of its key is taken now, when the first frame chose it (a client
      // that sends none holds no place up).
      const turn = tape.headTurn(key);
      const liveFault = faults ? this.liveFault(faults, key, label) : undefined;
      const { up, target } = this.upstreamSocket(this.opts.upstream, url, req, offered);
      up.once('close', () => turn.skip());
      client.once('close', () => turn.skip());
      up.once('close', () => liveFault?.missed());
      client.once('close', () => liveFault?.missed());
      up.on('unexpected-response', (_r, res) => {
        res.resume();
        handOver(undefined);
        this.upstreamFailed(target, `it answered HTTP ${res.statusCode ?? 502}`);
        sendUpstreamFailure(client, protocol, `tapedeck: the upstream refused the WebSocket ${target.origin}${target.pathname} (HTTP ${res.statusCode ?? 502})`);
      });
      up.on('error', (e) => {
        if (up.readyState === up.OPEN) return;
        handOver(undefined);
        this.upstreamFailed(target, e.message);
        sendUpstreamFailure(client, protocol, `tapedeck: the upstream WebSocket ${target.origin}${target.pathname} failed: ${e.message}`);
      });
      up.once('open', () => {
        if (client.readyState !== client.OPEN) return up.close();
        const s = new LiveSession({ ...base, client, asked: askedBy(req, offered, protocol), onDone: () => this.live.delete(s), ...(liveFault ? { liveFault } : {}) }, up, key, { url: stored, protocols: kept }, turn);
        this.live.add(s);
        handOver(s);
      });
    };
  }

  /**
   * The chaos a connect may get a fault from, and what its `x-tapedeck-chaos` header forces
   * (`close`) or forbids (`none`: no chaos at all); a header outside replay without `live` is
   * E_CHAOS_MODE. Undefined when no fault can come. Whether the connect is faulted is drawn
   * later, with the connect's key: at its session's cut for a replayed session (faultsOf), when
   * it goes live for one recorded now (liveFault).
   */
  private connectChaos(tape: RealtimeTape, key: string, header: string | string[] | undefined): ConnectChaos | undefined {
    const chaos = this.opts.chaos?.();
    const forced = Array.isArray(header) ? header[0] : header;
    if (forced !== undefined) refuseChaos(tape.mode, chaos?.options.live, `header ${CHAOS_HEADER}`);
    if (!chaos) return undefined;
    const force = forced === undefined ? undefined : chaos.forced(forced);
    // Forbidden, or nothing can fire: a reconnect of a session recorded behind an earlier fault
    // still goes on with that session (takeBehind), unfaulted.
    if (force === null || (force === undefined && !chaos.canFire)) return tape.records && this.behind.has(key) ? { chaos, force: null } : undefined;
    return { chaos, force };
  }

  private accept(req: IncomingMessage, socket: Duplex, head: Buffer, chosen: string | undefined, then: (client: WebSocket) => void): void {
    (req as { chosen?: string | false }).chosen = chosen ?? false;
    this.wss.handleUpgrade(req, socket, head, (client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      then(client);
    });
  }

  stats(): RealtimeStats {
    const t = this.opened;
    return {
      open: this.sockets.size,
      replayed: t?.sessionsReplayed ?? 0,
      recorded: t?.sessionsRecorded ?? 0,
      misses: t?.misses.length ?? 0,
      framesReplayed: t?.framesReplayed ?? 0,
      framesRecorded: t?.framesRecorded ?? 0,
    };
  }

  /**
   * The usage marks (`realtime <sid>`, the sid of a session's head record) of the sessions
   * replayed (a miss gives its session back) or recorded so far: a run summary counts them used,
   * as it counts the HTTP recordings served.
   *
   * @example
   * endpoint.usedMarks().has(`realtime ${head.sid}`) // true once the session replayed
   */
  usedMarks(): ReadonlySet<string> {
    return this.opened?.usedMarks() ?? new Set();
  }

  /** Ends live sessions (recorded as ended by the proxy), closes replayed ones, writes the tape. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.live].map((s) => s.shutdown().catch(() => {})));
    for (const c of this.sockets) c.close(1001, 'tapedeck is shutting down');
    // A client that does not answer the close within a second is cut (ws would wait 30 s).
    const deadline = Date.now() + 1000;
    while (this.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (const c of this.sockets) c.terminate();
    const t = this.tapeP ? await this.tapeP.catch(() => undefined) : undefined;
    await t?.close();
    this.wss.close();
  }
}

/**
 * What a reconnect's miss says: it was taken for the reconnect of a session recorded behind
 * chaos's close, in any mode, so recording again would miss the same way.
 */
const RECONNECT_DIFFERS = "this connect was taken for the reconnect after chaos's close (1011) on the session recorded behind it, which it replays before going on live (in every mode; recording again misses the same way): the reconnect must send what the closed connect sent, as it must for a replay of that session";

/** A connect chaos may fault: the decider, and the fault its header forces (null: none, undefined: drawn). */
interface ConnectChaos {
  chaos: Chaos<LoadedSession>;
  force: FaultName | null | undefined;
}

/** A session recorded behind a live fault, waiting for its reconnect (takeBehind). */
interface Behind {
  chaos: Chaos<LoadedSession>;
  call: ChaosCall<LoadedSession>;
  behind: BehindFault;
  /** A reconnect replays it now. */
  busy: boolean;
}

/** The close reason of a faulted session, replayed or recorded now (the same, so the client cannot tell them apart). */
function faultReason(name: RealtimeFault, seed: number): string {
  return `tapedeck chaos: ${name} injected (${FAULT_CLOSE_CODE}) in the middle of a response; seed ${seed}`;
}

/** A connect's place among the sessions of its key (RealtimeTape.headTurn), and whether a live session took it. */
interface Place {
  turn: HeadTurn | undefined;
  handedOn: boolean;
}

/** A connect the tape has no session for: noted as a miss, the full report warned; returns the client's message. */
function noRecording(tape: RealtimeTape, protocol: RealtimeProtocol, difference: string): string {
  const fix = tape.recordCommand;
  const message = `tapedeck miss: ${difference}; ${fix}`;
  const report = `tapedeck: realtime miss in ${tape.location}: ${difference}\n  ${fix}`;
  tape.miss(protocol.provider, message, report);
  tape.warn(report);
  return message;
}

const STRICT = 'with --strict-order each recorded session replays once';

/**
 * The miss of a connect whose recorded sessions were all replayed under --strict-order (`why`
 * says which), counted and reported as any miss: the tape has them, so it says so in place of
 * how to re-record.
 */
function usedUp(tape: RealtimeTape, protocol: RealtimeProtocol, difference: string, why: string): string {
  const message = `tapedeck miss: ${difference}: ${why}`;
  const report = `tapedeck: realtime miss in ${tape.location}: ${difference}\n  ${why}`;
  tape.miss(protocol.provider, message, report);
  tape.warn(report);
  return message;
}

/** Answers a handshake with an HTTP error and closes the socket. */
function refuse(socket: Duplex, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  if (socket.destroyed) return;
  const b = Buffer.from(body);
  socket.end(`HTTP/1.1 ${status} ${status === 503 ? 'Service Unavailable' : status === 502 ? 'Bad Gateway' : 'Error'}\r\nContent-Type: ${type}\r\nContent-Length: ${b.length}\r\nConnection: close\r\n\r\n${body}`);
}

/**
 * What a connect carried for the search of its secrets in the server's frames: its headers and
 * URL, and a key sent as a subprotocol (`openai-insecure-api-key.<key>`, as browsers send it)
 * counted as a credential header's.
 */
function askedBy(req: IncomingMessage, offered: readonly string[], protocol: RealtimeProtocol): EchoSource {
  const keys = offered.filter((p) => protocol.secretProtocol(p)).map((p) => p.slice(p.indexOf('.') + 1));
  if (keys.length === 0) return { headers: req.headers, url: req.url ?? '', body: new Uint8Array() };
  const given = req.headers['x-api-key'];
  return { headers: { ...req.headers, 'x-api-key': [...(given === undefined ? [] : [given].flat()), ...keys] }, url: req.url ?? '', body: new Uint8Array() };
}
