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
import { CHAOS_HEADER, type RealtimeFault } from '../chaos/options.ts';
import { hashValue } from '../core/index.ts';
import { realtimeProtocolFor, type RealtimeProtocol } from '../providers/realtime.ts';
import { firstFrameChoice, type FirstFrameChoice } from './choice.ts';
import { connectDifference } from './connect-miss.ts';
import type { LiveFault } from './live-cut.ts';
import type { RealtimeSessionOptions } from './session.ts';
import { FAULT_CLOSE_CODE, LiveSession, ReplaySession, asBuffer, errorText, firstFrameKey, sendMiss, type Data } from './session.ts';
import { RealtimeTape, type HeadTurn, type LoadedSession, type RealtimeTapeOptions, type RealtimeTiming } from './tape.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';
import { checkRedactOptions, REDACT_INNER } from '../store/redact-options.ts';
import type { EchoSource } from '../store/echo-redact.ts';
import { withoutTrailingSlashes } from '../store/upstream-prefix.ts';

export interface RealtimeEndpointOptions extends RealtimeTapeOptions {
  /** Base URL of the live provider (`https://api.openai.com`); `http(s):` becomes `ws(s):`. */
  upstream?: string;
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
  private closing = false;

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
    const base = { tape, protocol, label, timing: this.opts.timing };
    let fault: SessionFault | undefined;
    try {
      fault = this.decideFault(tape, key, label, req.headers[CHAOS_HEADER]);
    } catch (e) {
      return refuse(socket, 400, errorText(e));
    }
    if (!tape.serves) {
      // The reconnect after chaos's close on a session recorded in record mode gets the session
      // recorded behind the fault (whole, or cut again when it draws the fault again), as HTTP's
      // record-mode retry of a cut call gets the answer recorded behind the cut: as in CI, never
      // a second live session.
      const held = fault ? fault.chaos.held(fault.call, true) : this.opts.chaos?.()?.held(key, false);
      if (held) return this.serveRecorded(req, socket, head, kept, base, held, fault);
    }
    if (tape.serves && !fault && protocol.firstFrameChooses) {
      const held = this.opts.chaos?.()?.held(key, false);
      if (!held) return this.accept(req, socket, head, kept[0], (client) => this.chooseByFirstFrame(tape, protocol, base, key, label, client, req, url, offered, stored, kept));
      tape.sessionsReplayed++;
      return this.accept(req, socket, head, held.head.protocols.find((p) => kept.includes(p)) ?? kept[0], (client) => this.replay(base, client, held));
    }
    if (tape.serves) {
      let session: LoadedSession | undefined;
      let choice: FirstFrameChoice | undefined;
      // The session's place among the connect's (not for chaos's sessions): a miss gives it
      // back, a frame that differs may go on with another (src/realtime/switch.ts).
      let seat: RealtimeSessionOptions['seat'];
      try {
        // The reconnect after a faulted session gets the session that one was cut from.
        session = fault ? fault.chaos.held(key, true) : this.opts.chaos?.()?.held(key, false);
        // A faulted session is the next in order: chaos cuts the k-th connect's session.
        if (!session && fault) session = await tape.nextSession(key);
        else if (!session) {
          // The opening of the next session in order goes out now; the client's first frame
          // then chooses among the sessions that opened alike (src/realtime/choice.ts). One
          // without a client frame has nothing to wait for: it is this connect's.
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
        }
      } catch (e) {
        if (fault) fault.chaos.undo(fault.call, fault.name);
        // A damaged recording: this connect's session is lost, never another connect's given instead.
        return this.accept(req, socket, head, kept[0], (client) => sendMiss(client, protocol, `tapedeck: ${errorText(e)}`));
      }
      if (session) return this.serveRecorded(req, socket, head, kept, base, session, fault, choice, seat);
    }
    if (tape.serves && tape.mode === 'replay') {
      // A fault needs a recording to cut: a miss is answered as a miss (its fault never counted).
      if (fault) fault.chaos.undo(fault.call, fault.name);
      const other = tape.exists ? connectDifference(tape.sessionHeads(), stored, kept, req.headers) : undefined;
      const message = noRecording(tape, protocol, tape.exists ? `no recording of this session (${label})${other ? `: ${other}` : ''}` : `no tape at ${tape.location}`);
      return this.accept(req, socket, head, kept[0], (client) => sendMiss(client, protocol, message));
    }
    if (!this.opts.upstream) {
      if (fault) fault.chaos.undo(fault.call, fault.name);
      return refuse(socket, 502, `tapedeck: no upstream to forward ${label} to (give --upstream).`);
    }
    // A session recorded now is cut as its replay will be, the session stored whole behind the
    // fault for the reconnect (./live-cut.ts); one that records nothing (passthrough) is not
    // faulted, its fault never counted.
    const liveFault = fault && tape.records ? this.liveFault(fault, label) : undefined;
    if (fault && !liveFault) fault.chaos.undo(fault.call, fault.name);
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
      res.on('error', () => refuse(socket, 502, 'the upstream refused the WebSocket'));
    });
    up.on('error', (e) => {
      if (up.readyState !== up.OPEN) refuse(socket, 502, `tapedeck: the upstream WebSocket ${target.origin}${target.pathname} failed: ${e.message}`);
    });
    up.once('open', () => {
      this.accept(req, socket, head, up.protocol || undefined, (client) => {
        const s = new LiveSession({ ...base, client, asked: askedBy(req, offered, protocol), onDone: () => this.live.delete(s), ...(liveFault ? { liveFault } : {}) }, up, key, { url: stored, protocols: kept }, turn);
        this.live.add(s);
      });
    });
  }

  /**
   * The fault of a session recorded now, settled once: injected at its cut (the session stored
   * behind it held for the fault's retry, the reconnect; counted and, the first, announced; the
   * retry may come now), or taken back when the session ended before its first response
   * completed, as an HTTP fault with no stored answer to damage is.
   */
  private liveFault(fault: SessionFault, label: string): LiveFault {
    const { chaos, call, name } = fault;
    let settled = false;
    return {
      reason: faultReason(fault),
      injected: (session) => {
        if (settled) return;
        settled = true;
        if (session) chaos.hold(call, session);
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
   * Replays a recorded session to the connect: cut by its fault, if it has one (the session
   * held for the fault's retry), else whole. `choice`, `seat`: see RealtimeSessionOptions.
   */
  private serveRecorded(req: IncomingMessage, socket: Duplex, head: Buffer, kept: string[], base: Omit<RealtimeSessionOptions, 'client'>, s: LoadedSession, fault: SessionFault | undefined, choice?: FirstFrameChoice, seat?: RealtimeSessionOptions['seat']): void {
    let faulted: { fault: { reason: string; sent: () => void } } | undefined;
    if (fault) {
      const { chaos, call } = fault;
      chaos.hold(call, s);
      // Counted (and the first one announced) now that a recorded session is there to cut.
      chaos.injected(fault.name, base.label);
      faulted = { fault: { reason: faultReason(fault), sent: () => chaos.sent(call) } };
    } else base.tape.sessionsReplayed++;
    this.accept(req, socket, head, s.head.protocols.find((p) => kept.includes(p)) ?? kept[0], (client) => {
      try {
        new ReplaySession({ ...base, client, ...faulted, ...(choice ? { choice } : {}), ...(seat ? { seat } : {}) }, s);
      } catch (e) {
        choice?.release();
        faulted?.fault.sent();
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
  private replay(base: Omit<RealtimeSessionOptions, 'client'>, client: WebSocket, session: LoadedSession, seat?: RealtimeSessionOptions['seat']): ReplaySession | undefined {
    try {
      return new ReplaySession({ ...base, client, ...(seat ? { seat } : {}) }, session);
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
  private chooseByFirstFrame(tape: RealtimeTape, protocol: RealtimeProtocol, base: Omit<RealtimeSessionOptions, 'client'>, key: string, label: string, client: WebSocket, req: IncomingMessage, url: URL, offered: string[], stored: string, kept: string[]): void {
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
      let chosen: { session: LoadedSession; matched: boolean; index?: number } | undefined;
      try {
        if (first !== undefined) chosen = await tape.chooseSession(key, first);
        else {
          // A first frame that cannot choose (audio, binary): the connect's sessions in order.
          const next = await tape.nextPlace(key);
          chosen = next ? { ...next, matched: true } : undefined;
        }
      } catch (e) {
        handOver(undefined);
        return sendMiss(client, protocol, `tapedeck: ${errorText(e)}`);
      }
      if (chosen && (chosen.matched || tape.mode === 'replay')) {
        // Counted as every replayed session is; one told as a miss is taken back (ReplaySession.miss).
        tape.sessionsReplayed++;
        // A session the frame chose is this connect's (one a miss is told against is not).
        const seat = chosen.matched ? { lineup: tape.lineup(key)!, ...(chosen.index === undefined ? {} : { index: chosen.index }) } : undefined;
        return handOver(this.replay(base, client, chosen.session, seat));
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
      const { up, target } = this.upstreamSocket(this.opts.upstream, url, req, offered);
      up.once('close', () => turn.skip());
      client.once('close', () => turn.skip());
      up.on('unexpected-response', (_r, res) => {
        res.resume();
        handOver(undefined);
        sendMiss(client, protocol, `tapedeck: the upstream refused the WebSocket ${target.origin}${target.pathname} (HTTP ${res.statusCode ?? 502})`);
      });
      up.on('error', (e) => {
        if (up.readyState === up.OPEN) return;
        handOver(undefined);
        sendMiss(client, protocol, `tapedeck: the upstream WebSocket ${target.origin}${target.pathname} failed: ${e.message}`);
      });
      up.once('open', () => {
        if (client.readyState !== client.OPEN) return up.close();
        const s = new LiveSession({ ...base, client, asked: askedBy(req, offered, protocol), onDone: () => this.live.delete(s) }, up, key, { url: stored, protocols: kept }, turn);
        this.live.add(s);
        handOver(s);
      });
    };
  }

  /**
   * Whether this connect's session is faulted: asked of the proxy's chaos with the connect's
   * key (its ordinal among the sessions of that key is the chaos's count). The header forces
   * (`close`) or forbids (`none`) it; a header outside replay without `live` is E_CHAOS_MODE.
   */
  private decideFault(tape: RealtimeTape, key: string, label: string, header: string | string[] | undefined): SessionFault | undefined {
    const chaos = this.opts.chaos?.();
    const forced = Array.isArray(header) ? header[0] : header;
    if (forced !== undefined) refuseChaos(tape.mode, chaos?.options.live, `header ${CHAOS_HEADER}`);
    if (!chaos) return undefined;
    const force = forced === undefined ? undefined : chaos.forced(forced);
    if (force === undefined && !chaos.canFire) return undefined;
    // A faulted session's close comes mid-session, long after its connect: a connect of the same
    // key before it is a session of its own, never the fault's retry (the close's sender says
    // when it is out: ReplaySession, LiveSession).
    const v = chaos.decide(key, force, label, { tellsSent: true });
    return v?.fault ? { chaos, call: v.call, name: v.fault as RealtimeFault } : undefined;
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
   * The usage marks of the sessions replayed (a miss gives its session back) or recorded so far:
   * a run summary counts them used, as it counts the HTTP recordings served.
   *
   * @example
   * endpoint.usedMarks().has(realtimeUsageMark(head)) // true once the session replayed
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

/** A connect chaos faulted: the decider, the call (the connect and its retries) and the fault. */
interface SessionFault {
  chaos: Chaos<LoadedSession>;
  call: ChaosCall<LoadedSession>;
  name: RealtimeFault;
}

/** The close reason of a faulted session, replayed or recorded now (the same, so the client cannot tell them apart). */
function faultReason(fault: SessionFault): string {
  return `tapedeck chaos: ${fault.name} injected (${FAULT_CLOSE_CODE}) in the middle of a response; seed ${fault.chaos.seed}`;
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
