/**
 * One MCP session between a client and a server (live or taped), whatever the transport:
 * stdio, Streamable HTTP and SDK transports turn their bytes into JSON-RPC messages and call
 * `fromClient`; the session answers through `send` and, when live, talks to the server through
 * an McpUpstream.
 *
 * Which exchange a server message belongs to: a response to the request with its id; a progress
 * notification to the request whose progress token it carries; anything else (logging,
 * list_changed, the server's own requests) to the client message sent last. An exchange ends
 * when it has its answer. A request's answer goes to the client only once the exchange's record
 * is stored (as an HTTP answer does): a client that got an answer knows it is on the tape,
 * whatever happens to this process next. Server messages that come after the answer and before
 * the client's next message are recorded at the start of the next exchange, so they replay
 * after the answer and before the next one, as the client saw them. A notification's exchange
 * (nothing is acknowledged) ends when the client sends its next message or the session ends,
 * once the server has answered a request: a server that never answered anything (it could not
 * start, or exited at once) leaves nothing on the tape. A request with no answer (the server
 * crashed, timed out) is never recorded, and a message that never reached the server (it could
 * not be started) gets one error answer, the failure to start it. A request the client cancelled
 * is recorded as cancelled, and replays as such (cancelled.ts).
 *
 * A session keeps its context: the digest of the keys of the client messages it sent so far
 * (key.ts, mcpContextKey). Once an update-mode session is live, every exchange it makes is
 * recorded. A call new to the tape is stored under its key, as in record mode; a call the tape
 * already has (another session's, or this session's own earlier one) is stored under the
 * session's context key, since its answer follows from what this session did before: stored
 * as one more recording of the key, it would be served to the k-th call of whichever session
 * replays first, and this session's replay would get another session's answer. Replay looks a
 * message up under its context key first, then under its key. A record-mode session stores a
 * call under its context key when the tape has a recording there, so re-recording the session
 * replaces it, and when another session of its program first recorded the call at another place
 * (one server used twice, in two states: firstPlace).
 *
 * A session of a program on one tape (McpSessionOptions.session and server, from
 * src/mcp/sessions.ts) keys every message apart (mcpServerKey): it neither replays nor replaces
 * another session's, or another server's, recordings.
 */
import { TapedeckError } from '../errors.ts';
import { echoing } from '../store/echo-redact.ts';
import type { Redactor } from '../store/redact.ts';
import { MCP_RECORD_KIND, type McpAnswer, type McpEvent, type McpRecord } from '../store/records.ts';
import { errorResponse, isNotification, isRequest, isResponse, MCP_ERROR, type JsonRpcId, type JsonRpcMessage, type JsonRpcRequest } from './jsonrpc.ts';
import { MCP_KEY_VERSION, mcpContextKey, mcpKey, mcpServerKey } from './key.ts';
import { callLabel, type McpMiss, type McpPositions, type McpTape } from './tape.ts';
import { cancelledAfter, cancelWaitMs, MCP_CANCEL_GRACE_MS, notCancelled, type McpCancelledRecord } from './cancelled.ts';
import { MCP_RECORD_VERSION, sentMessage, wireBytes } from './wire.ts';
import { CallTurns, type CallTurn } from './call-turns.ts';
import { Chaos } from '../chaos/decide.ts';
import { refuseChaos } from '../chaos/refused.ts';
import type { ChaosOptions, McpFault } from '../chaos/options.ts';

/** The live server, behind whatever transport reaches it. */
export interface McpUpstream {
  start(): Promise<void>;
  send(message: JsonRpcMessage): Promise<void> | void;
  close(): Promise<void>;
  /**
   * Ends the server now, without the grace close() gives it (a stdio server: SIGTERM at once,
   * SIGKILL soon after); close() still resolves once it is gone. For a session stopped by a
   * signal (McpSession.hurry). Optional: without it, close() is all there is.
   */
  terminate?(): void;
  /**
   * Set by the session: a message from the server; `standalone` when it came on the server's
   * own stream (Streamable HTTP's GET stream) rather than with a request.
   */
  onmessage?: (message: JsonRpcMessage, standalone?: boolean) => void;
  /** Set by the session: the server is gone (exited, stream closed); `why` for messages. */
  onclose?: (why?: string) => void;
}

/** Replay pacing: everything at once (default), as recorded, or a fixed gap in ms between messages. */
export type McpTiming = 'none' | 'recorded' | number;

/** Options of McpSession: its tape, the live server, where its answers go, pacing and timeouts. */
export interface McpSessionOptions {
  /** The tape the session replays from and records to. */
  tape: McpTape;
  /**
   * The secret variables of the environment the live server was started with (`tapedeck mcp`,
   * src/mcp/server-env.ts): masked wherever the server repeats their values, as a call's own
   * secret params are. A token of no known format printed by a tool (40 hex digits) was stored
   * as sent.
   */
  serverEnv?: Readonly<Record<string, string>>;
  /** Makes the live server's transport; started on the first message that needs it. */
  upstream?: () => McpUpstream;
  /** A message to the client; `related` is the id of the client request it belongs to. */
  send: (message: JsonRpcMessage, related?: JsonRpcId) => void;
  /** Replay pacing: everything at once (default), as recorded, or a fixed gap in ms between messages. */
  timing?: McpTiming;
  /** A live request with no answer for this long gets a timeout error (default 10 minutes). */
  timeoutMs?: number;
  /**
   * At close, how long answers to live requests still on the way may take: they are recorded
   * and delivered as usual, and only requests still unanswered then are not recorded (default
   * {@link MCP_SHUTDOWN_GRACE_MS}; `tapedeck mcp --shutdown-timeout`).
   */
  shutdownTimeoutMs?: number;
  /** Where a user sets `shutdownTimeoutMs`, for the warning about an answer that did not come in it. */
  shutdownFix?: string;
  /** Least time between two replayed messages of one exchange (default 0: the next turn of the event loop). */
  gapMs?: number;
  /** How long a replayed server request waits for the client's answer (default 60 s). */
  clientTimeoutMs?: number;
  /**
   * Replay of a request recorded as cancelled by the client: how much longer than recorded the
   * client may take to cancel it before it is a miss (default {@link MCP_CANCEL_GRACE_MS}).
   */
  cancelGraceMs?: number;
  /** The live server is gone (exited, its connection closed); open requests have had their error. */
  onServerGone?: (why: string) => void;
  /**
   * The live server is started at most once: once it is gone (it exited, or could not start),
   * later messages get its error (-32051) and are not sent on. For transports where the server
   * is the session (stdio, an SDK transport): starting it again would run a command that just
   * failed once per message, each failure answered as if the message had been sent. Unset, a
   * later message makes a new upstream (Streamable HTTP: the endpoint may be back).
   */
  serverOnce?: boolean;
  /** The full report of a miss (default: stderr). */
  onMiss?: (report: string, miss: McpMiss) => void;
  /**
   * Which session of its program on this tape this is, from 1 (default): a later one's
   * exchanges are keyed apart (mcpSessionKey), so sessions of several servers, or of one server
   * in several states, each replay their own (tapeTransport numbers them, src/mcp/sessions.ts).
   */
  session?: number;
  /**
   * The digest of the session's server (src/mcp/sessions.ts): its keys are scoped to it and its
   * records carry it, so a session replays only its own server's recordings. Unset: keyed by the
   * session number alone (tapes of an older release, `tapedeck serve`).
   */
  server?: string;
  /**
   * Record mode: false when another session of the program on this tape first recorded `key`
   * elsewhere than `at` (its context key; the first recording is noted): the call is then stored
   * under its context key. Set by tapeTransport for the sessions of one program
   * (src/mcp/sessions.ts); unset, true.
   */
  firstPlace?: (key: string, at: string) => boolean;
  /**
   * Faults on demand for `tools/call` (docs/chaos.md): `error` (a JSON-RPC error), `tool-error`
   * (a result with `isError: true`), `exit` (-32051, as when the server exits mid-call) and
   * `timeout` (-32052). Never recorded; refused outside replay unless `live`.
   */
  chaos?: ChaosOptions;
}

interface Live {
  id?: JsonRpcId;
  method: string;
  params: unknown;
  key: string;
  t0: number;
  events: McpEvent[];
  answered: boolean;
  cut: boolean;
  progressToken?: unknown;
  open: number;
  timer?: ReturnType<typeof setTimeout>;
  /** Set once the message is handed to the server (its send began); an exchange without it never reached the server. */
  sent?: true;
  /**
   * Not a client message: what the server sends after the answer that ended the current
   * exchange, until the client's next message, which takes it over (liveMessage).
   */
  carry?: true;
  /**
   * A request being recorded: its place among the identical requests of this session in flight
   * (./call-turns.ts). Its record is stored only after theirs, so recordings are in
   * the order the calls were sent, whatever order the server answered them in. Ended when the
   * record is stored or the exchange is cut.
   */
  turn?: CallTurn;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const progressTokenOf = (params: unknown): unknown => (isObject(params) && isObject(params._meta) ? params._meta.progressToken : undefined);
const answerOf = (m: Record<string, unknown>): McpAnswer => ('error' in m ? { error: m.error as { code: number; message: string } } : { result: m.result });
const now = () => performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const DEFAULT_MCP_TIMEOUT_MS = 600_000;
/**
 * How long a closing session waits for answers still on the way, and a stdio server to exit once
 * its stdin is closed (src/mcp/stdio.ts): one shutdown grace, so an answer the server sends while
 * it winds down is recorded, and nothing waits on a hung server for long.
 */
export const MCP_SHUTDOWN_GRACE_MS = 2000;

/** Errors of the key (canonical JSON) that come from the client's params, not from tapedeck or the server. */
const UNKEYABLE: ReadonlySet<string> = new Set(['E_LONE_SURROGATE', 'E_NON_FINITE', 'E_JSON']);

/**
 * One MCP client's session over a tape: answers from recordings in replay, and in record and
 * update mode from the live server, whose exchanges it records.
 *
 * @example
 * const session = new McpSession({ tape, upstream: () => stdioUpstream(cmd, args), send: (m) => write(m) })
 * session.fromClient(JSON.parse(line))
 */
export class McpSession {
  private readonly tape: McpTape;
  /** Each exchange's redactor for what the server sends in it (see masks()). */
  private readonly echoMasks = new WeakMap<Live, Redactor>();
  private readonly opts: McpSessionOptions;
  private upstream: McpUpstream | undefined;
  private starting: Promise<void> | undefined;
  /** Whether client messages go to the live server (record, passthrough; update after a miss). */
  private live: boolean;
  private readonly open: Live[] = [];
  private readonly byId = new Map<JsonRpcId, Live>();
  private current: Live | undefined;
  /** The server's requests to the client, by the server's id, while the client answers. */
  private readonly serverPending = new Map<JsonRpcId, { ev: Extract<McpEvent, { request: unknown }>; ex: Live }>();
  /** Replay: our requests to the client, by the id we gave them. */
  private readonly clientPending = new Map<JsonRpcId, (m: Record<string, unknown>) => void>();
  private readonly cancelled = new Set<JsonRpcId>();
  /** Replay: requests recorded as cancelled, waiting for the client to cancel them (awaitCancel). */
  private readonly cancelWaits = new Map<JsonRpcId, ReturnType<typeof setTimeout>>();
  /**
   * Live: messages to the client wait, in order, behind an answer whose record is being stored;
   * undefined when nothing waits (then a message goes out at once).
   */
  private outbox: Promise<void> | undefined;
  /** Update mode: what the client sent while replayed, to bring a live server to the same state. */
  private readonly history: { message: JsonRpcMessage; answers: McpEvent[]; cancelled?: true }[] = [];
  private gate: Promise<void> = Promise.resolve();
  private playing: Promise<void> = Promise.resolve();
  private seq = 0;
  private closed = false;
  /** The live server answered a request: from then on its notifications' exchanges are recorded. */
  private serverAnswered = false;
  /** Why the live server is gone (its start's own error when it could not start), for serverOnce. */
  private lost: TapedeckError | undefined;
  /** The last `lost` warned about: every later message fails with it, said once. */
  private lostWarned: TapedeckError | undefined;
  /** Set while close() waits for the answers still on the way: called when one comes or is cut. */
  private settled: (() => void) | undefined;
  /** The context of the client messages so far ('' at the start; see mcpContextKey). */
  private context = '';
  /**
   * This session's place among each key's recordings: a session starts with its own
   * initialize, so it replays from the first recording of each call, however many sessions on
   * the same tape (tapedeck serve) were served before it.
   */
  private readonly positions: McpPositions;
  /** Record turns of this session's requests in flight, per record key (see Live.turn). */
  private readonly turns = new CallTurns();
  /** Records waiting for their turn or being stored, for close() to wait on. */
  private readonly saving = new Set<Promise<string | undefined>>();

  /** Faults on demand, when asked for. */
  readonly chaos: Chaos | undefined;
  /** Which session of its program this is (McpSessionOptions.session). */
  private readonly ordinal: number;

  constructor(opts: McpSessionOptions) {
    this.opts = opts;
    this.ordinal = opts.session !== undefined && Number.isInteger(opts.session) && opts.session > 1 ? opts.session : 1;
    this.tape = opts.tape;
    this.positions = opts.tape.positions();
    this.live = !opts.tape.serves;
    if (opts.chaos) {
      refuseChaos(opts.tape.mode, opts.chaos.live, 'chaos option, --chaos');
      this.chaos = new Chaos(opts.chaos, 'mcp', (m) => this.tape.warn(m));
    }
    if (this.live && !opts.upstream) {
      throw new TapedeckError('E_ARG', `MCP mode ${opts.tape.mode} needs the server: none was given.`, { hint: 'Give the server command after --, or use --mode replay.' });
    }
  }

  /** A message from the client. Never throws: problems become JSON-RPC errors or warnings. */
  fromClient(m: JsonRpcMessage): void {
    if (this.closed) return;
    // While update mode brings a live server up to date, later messages wait their turn.
    this.gate = this.gate.then(() => this.handle(m)).catch((e: unknown) => this.fail(m, e));
  }

  private fail(m: JsonRpcMessage, e: unknown): void {
    const message = e instanceof Error ? e.message : String(e);
    // Params the key cannot be computed from (a lone surrogate has no UTF-8 form) are the
    // client's to fix; nothing reached the server.
    const unkeyable = e instanceof TapedeckError && UNKEYABLE.has(e.code);
    const why = unkeyable ? `tapedeck: the params of ${(m as { method?: string }).method} cannot be keyed, so the call was not sent: ${message}` : `tapedeck: ${message}`;
    const timedOut = e instanceof TapedeckError && e.code === 'E_UPSTREAM_TIMEOUT';
    if (isRequest(m)) this.deliver(errorResponse(m.id, unkeyable ? MCP_ERROR.badParams : timedOut ? MCP_ERROR.timeout : MCP_ERROR.serverGone, why), m.id);
    if (this.lost !== undefined && e === this.lost) {
      if (this.lostWarned === this.lost) return;
      this.lostWarned = this.lost;
    }
    this.tape.warn(`tapedeck: ${e instanceof TapedeckError ? `${e.code}: ` : ''}${unkeyable ? why.slice('tapedeck: '.length) : message}`);
  }

  private handle(m: JsonRpcMessage): void | Promise<void> {
    if (isResponse(m)) return this.clientAnswer(m);
    if (!isRequest(m) && !isNotification(m)) {
      this.tape.warn(`tapedeck: ignored a client message that is not JSON-RPC: ${JSON.stringify(m).slice(0, 80)}`);
      return;
    }
    if (m.method === 'notifications/cancelled') {
      const id = isObject(m.params) ? (m.params.requestId as JsonRpcId | undefined) : undefined;
      if (id !== undefined) {
        this.cancelled.add(id);
        const ex = this.byId.get(id);
        if (ex) this.cancelledByClient(ex);
        const waiting = this.cancelWaits.get(id);
        if (waiting !== undefined) {
          clearTimeout(waiting);
          this.cancelWaits.delete(id);
        }
      }
      if (this.live) return this.forward(m);
      return;
    }
    if (this.chaos && isRequest(m) && m.method === 'tools/call') {
      const delay = this.injected(m);
      if (delay === true) return;
      // A delay alone: the call is answered as usual, late.
      if (delay > 0) return sleep(delay).then(() => (this.live ? this.liveMessage(m) : this.replayMessage(m)));
    }
    if (this.live) return this.liveMessage(m);
    return this.replayMessage(m);
  }

  /**
   * Answers a tool call with an injected fault when the chaos decider says so (the recording,
   * or the live server, is not asked: the retry gets the call's own answer). Else the delay
   * before the usual answer, in ms (0: none).
   */
  private injected(m: JsonRpcRequest): true | number {
    const name = isObject(m.params) ? String(m.params.name) : '';
    const v = this.chaos!.decide(mcpKey(m.method, m.params), undefined, `tools/call ${name}`);
    if (!v) return 0;
    const fault = v.fault as McpFault | undefined;
    const said = `(injected by tapedeck chaos)`;
    const answer =
      fault === 'error'
        ? errorResponse(m.id, -32603, `tapedeck chaos: tool ${name} failed ${said}`)
        : fault === 'tool-error'
          ? { jsonrpc: '2.0' as const, id: m.id, result: { content: [{ type: 'text', text: `tapedeck chaos: tool ${name} reported an error ${said}` }], isError: true } }
          : fault === 'exit'
            ? errorResponse(m.id, MCP_ERROR.serverGone, `tapedeck: the MCP server exited before it answered tools/call ${name} ${said}; nothing was recorded.`)
            : fault === 'timeout'
              ? errorResponse(m.id, MCP_ERROR.timeout, `tapedeck: the MCP server sent no answer to tools/call ${name} ${said}; nothing was recorded.`)
              : undefined;
    if (!answer) return v.latencyMs;
    this.after(async () => {
      if (v.latencyMs > 0) await sleep(v.latencyMs);
      if (!this.closed) this.opts.send(answer, m.id);
    });
    return true;
  }

  // ------------------------------------------------------------------------------------------
  // Live: forward, and record what comes back
  // ------------------------------------------------------------------------------------------

  private async ensureUpstream(): Promise<McpUpstream> {
    if (this.lost && this.opts.serverOnce) throw this.lost;
    if (this.upstream) {
      await this.starting;
      return this.upstream;
    }
    const up = this.opts.upstream!();
    this.upstream = up;
    up.onmessage = (msg, standalone) => this.fromServer(msg, standalone === true);
    up.onclose = (why) => this.serverGone(why);
    this.starting = up.start();
    try {
      await this.starting;
    } catch (e) {
      // Its own error names the command and what to check: it answers this message and, with
      // serverOnce, every later one (serverGone, called first, had only the bare reason).
      this.lost = e instanceof TapedeckError ? e : new TapedeckError('E_UPSTREAM', `could not start the MCP server: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
    return up;
  }

  /** Sends a client message to the live server (started first if need be); `ex` is its exchange, marked sent. */
  private async forward(m: JsonRpcMessage, ex?: Live): Promise<void> {
    const up = await this.ensureUpstream();
    if (ex) ex.sent = true;
    await up.send(m);
  }

  /**
   * The context key of a client message whose key is `key`, at this point of the session; the
   * session's context moves past it, except for `ping` (sent on a timer by some clients, it
   * changes nothing on the server).
   */
  private place(method: string, key: string): string {
    const at = mcpContextKey(this.context, key);
    if (method !== 'ping') this.context = at;
    return at;
  }

  /**
   * The key a live exchange is stored under: `at`, its context key, where the tape has a
   * recording at that place (record mode replaces it) and, in update mode, for a call the tape
   * already has or another live call of this tape claimed; else `key`, its key (a call new to
   * the tape: served to the first call of it, which nobody was served before).
   */
  private recordKey(key: string, at: string): string {
    if (!this.tape.records) return key;
    if (this.tape.count(at).recorded > 0) return at;
    // Record mode: another session of this program (same tape, same session number) stored the
    // call after other messages: this session's answer follows from its own history, and stored
    // under the key it would replace that session's (docs/mcp.md, "Several sessions on one tape").
    if (this.tape.mode === 'record') return this.opts.firstPlace?.(key, at) === false ? at : key;
    if (this.tape.mode !== 'update') return key;
    if (this.tape.claimed.has(key) || this.tape.count(key).recorded > 0) return at;
    this.tape.claimed.add(key);
    return key;
  }

  /** `at`: the message's context key, when replayMessage already placed it (update mode going live). */
  private async liveMessage(m: JsonRpcMessage & { method: string }, at?: string): Promise<void> {
    const params = (m as { params?: unknown }).params;
    const plain = this.keyOf(m.method, params);
    const place = at ?? this.place(m.method, plain);
    // A fleet on one Redis store: whether the call is new to the tape counts others' recordings too.
    if (this.tape.mode === 'update' && this.tape.shared) await this.tape.refresh(plain).catch(() => false);
    this.finishComplete();
    const key = this.recordKey(plain, place);
    // Record mode: the call's old recordings are in use until its new exchange is stored.
    this.tape.ask(key);
    const ex: Live = { method: m.method, params, key, t0: now(), events: [], answered: false, cut: false, progressToken: progressTokenOf(params), open: 0 };
    const carry = this.current?.carry ? this.current : undefined;
    if (carry) {
      // Sent before this message: first in its exchange, at its start. The same objects: a
      // server request among them still gets the client's answer written into it.
      for (const ev of carry.events) {
        ev.ms = 0;
        ex.events.push(ev);
      }
      ex.open = carry.open;
      for (const p of this.serverPending.values()) if (p.ex === carry) p.ex = ex;
    }
    if (isRequest(m)) {
      ex.id = m.id;
      // Identical calls are stored in the order they were sent (see Live.turn).
      if (this.tape.records) ex.turn = this.turns.take(key);
      this.byId.set(m.id, ex);
      const limit = this.opts.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
      ex.timer = setTimeout(() => this.timedOut(ex, limit), limit);
      ex.timer.unref?.();
    }
    this.open.push(ex);
    this.current = ex;
    try {
      await this.forward(m, ex);
    } catch (e) {
      // Never (wholly) sent: not recorded. Its error answer comes from fail(), the one answer
      // of its id, unless the server's going already answered it (serverGone).
      const answered = ex.cut;
      this.cut(ex);
      if (!answered) throw e;
    }
  }

  private timedOut(ex: Live, limit: number): void {
    if (ex.answered || ex.cut) return;
    this.cut(ex);
    this.tape.warn(`tapedeck: the server sent no answer to ${ex.method} for ${limit} ms; answered with a timeout error, nothing recorded.`);
    this.deliver(errorResponse(ex.id!, MCP_ERROR.timeout, `tapedeck: the MCP server sent no answer to ${ex.method} within ${limit} ms; nothing was recorded.`), ex.id);
  }

  /** An exchange that will never be whole: not recorded, its late answer (if any) dropped. */
  private cut(ex: Live): void {
    ex.cut = true;
    // Never recorded: the identical calls sent after it need not wait for it.
    ex.turn?.finish();
    if (ex.timer) clearTimeout(ex.timer);
    if (ex.id !== undefined) this.byId.delete(ex.id);
    const i = this.open.indexOf(ex);
    if (i >= 0) this.open.splice(i, 1);
    if (this.current === ex) this.current = undefined;
    this.settled?.();
  }

  /**
   * Live: the client cancelled a request the server has not answered. The exchange is whole as it
   * is: recorded as cancelled (cancelled.ts), with what the server sent before, so its replay
   * sends that and waits for the client to cancel again. A late answer is dropped, as for any
   * cut exchange.
   */
  private cancelledByClient(ex: Live): void {
    const ms = this.ms(ex);
    // Recorded as cancelled, in its turn: cut() must not end the turn before the record is stored.
    const turn = ex.turn;
    ex.turn = undefined;
    this.cut(ex);
    ex.turn = turn;
    // Never handed to a server (it could not start): nothing happened to record.
    if (!ex.sent || this.lost) {
      turn?.finish();
      return;
    }
    // A server request the client has not answered has nothing to compare on replay: left out.
    ex.events = ex.events.filter((ev) => !('request' in ev) || ev.answer !== undefined);
    void this.save(ex, ms);
  }

  private serverGone(why?: string): void {
    const reason = why ?? 'the MCP server closed its connection';
    this.lost ??= new TapedeckError('E_UPSTREAM', `${reason}; the message was not sent to it, and nothing was recorded.`);
    for (const ex of [...this.open]) {
      // Not handed to the server yet (it is being started): the failure to send it answers it.
      if (!ex.sent) continue;
      // A notification to a server that never answered anything: it may never have read it.
      if (ex.id === undefined && !this.serverAnswered) this.cut(ex);
      if (ex.id === undefined || ex.answered) continue;
      this.cut(ex);
      this.deliver(errorResponse(ex.id, MCP_ERROR.serverGone, `tapedeck: ${reason} before it answered ${ex.method}; nothing was recorded.`), ex.id);
    }
    this.upstream = undefined;
    this.starting = undefined;
    // A warm-up (goLive) waiting on this server's answers ends with this error.
    this.warmFail?.(this.lost);
    this.opts.onServerGone?.(reason);
  }

  private fromServer(m: JsonRpcMessage, standalone = false): void {
    if (isResponse(m)) {
      this.serverAnswered = true;
      const ex = this.byId.get(m.id);
      if (!ex) {
        // An answer to a request that was cut (timed out, cancelled) or to a warm-up request.
        this.warmAnswer?.(m);
        return;
      }
      this.byId.delete(m.id);
      if (ex.timer) clearTimeout(ex.timer);
      ex.answered = true;
      // As the server sent it (its member order, its id): src/mcp/wire.ts.
      ex.events.push({ ms: this.ms(ex), response: true, message: wireBytes(this.masks(ex).value(m)) });
      // Whole unless the client still owes the server an answer: stored now, answered once stored.
      if (ex.open === 0) {
        const wasCurrent = this.current === ex;
        this.close1(ex);
        const stored = this.save(ex);
        // What the server sends next, until the client's next message, goes with that message.
        if (wasCurrent) this.current = { method: ex.method, key: '', params: undefined, t0: now(), events: [], answered: true, cut: false, open: 0, carry: true };
        this.deliver(m, ex.id, stored, ex.method);
      } else this.deliver(m, ex.id);
      this.settled?.();
      return;
    }
    if (this.warming && isRequest(m)) {
      this.warmServerRequest(m);
      return;
    }
    let ex = this.current && !this.current.cut ? this.current : undefined;
    if (isNotification(m) && m.method === 'notifications/progress') {
      const token = isObject(m.params) ? m.params.progressToken : undefined;
      ex = this.open.find((e) => e.progressToken !== undefined && e.progressToken === token) ?? ex;
    }
    if (isRequest(m)) {
      if (ex) {
        const ev: Extract<McpEvent, { request: unknown }> = { ms: this.ms(ex), request: { method: m.method }, message: wireBytes(this.masks(ex).value(m)), answer: undefined as unknown as McpAnswer };
        if (standalone) ev.standalone = true;
        ex.events.push(ev);
        ex.open++;
        this.serverPending.set(m.id, { ev, ex });
      }
    } else if (isNotification(m) && ex) {
      ex.events.push({ ms: this.ms(ex), notification: { method: m.method }, message: wireBytes(this.masks(ex).value(m)), ...(standalone ? { standalone: true as const } : {}) });
    }
    this.deliver(m, standalone ? undefined : ex?.id);
  }

  /**
   * Sends a live message to the client, after every message waiting before it; `stored` (an
   * answer's record being stored) makes it and everything after it wait for the store. An
   * answer whose record failed is not sent: the client gets a record-failed error instead.
   */
  private deliver(m: JsonRpcMessage, related?: JsonRpcId, stored?: Promise<string | undefined>, method?: string): void {
    if (stored === undefined && this.outbox === undefined) return this.opts.send(m, related);
    const next = (this.outbox ?? Promise.resolve())
      .then(async () => {
        const failed = stored === undefined ? undefined : await stored;
        if (failed === undefined || !isResponse(m)) return this.opts.send(m, related);
        this.opts.send(errorResponse(m.id, MCP_ERROR.recordFailed, `tapedeck: the answer to ${method ?? 'the request'} could not be recorded in ${this.tape.location} (${failed}), so it is not given as if it were; fix the store (free disk space, release the tape lock, bring Redis back) and call again.`), related);
      })
      // A transport that throws must not stop the messages after this one.
      .catch((e: unknown) => this.tape.warn(`tapedeck: could not send a message to the client: ${e instanceof Error ? e.message : String(e)}`));
    this.outbox = next;
    void next.then(() => {
      if (this.outbox === next) this.outbox = undefined;
    });
  }

  /**
   * The redactor for what the server sends within `ex`: the tape's, plus the secret values of
   * the exchange's own params (a tool's `password` argument) masked wherever the server repeats
   * them, as an HTTP answer echoing its request's secrets is (src/store/echo-redact.ts). The
   * params are masked by name in the record; a tool result saying "your password X works" holds
   * the same value under no name. Made once per exchange.
   */
  private masks(ex: Live): Redactor {
    let r = this.echoMasks.get(ex);
    if (r === undefined) {
      // The server's environment is looked for as a request's headers are: by name, whole values.
      const env = this.opts.serverEnv ?? {};
      r = ex.params === undefined && this.opts.serverEnv === undefined ? this.tape.redactor : echoing(this.tape.redactor, { headers: env, url: '', body: ex.params === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify({ method: ex.method, params: ex.params })) });
      this.echoMasks.set(ex, r);
    }
    return r;
  }

  /** Takes a whole exchange out of the open ones. */
  private close1(ex: Live): void {
    this.open.splice(this.open.indexOf(ex), 1);
    if (this.current === ex) this.current = undefined;
  }

  private ms(ex: Live): number {
    return Math.round((now() - ex.t0) * 1000) / 1000;
  }

  /** The client's answer to a server request (live) or to a replayed one. */
  private async clientAnswer(m: JsonRpcMessage & { id: JsonRpcId }): Promise<void> {
    const mine = this.clientPending.get(m.id);
    if (mine) {
      this.clientPending.delete(m.id);
      mine(m as unknown as Record<string, unknown>);
      return;
    }
    const pending = this.serverPending.get(m.id);
    if (pending) {
      this.serverPending.delete(m.id);
      pending.ev.answer = this.tape.redactor.value(answerOf(m as unknown as Record<string, unknown>));
      pending.ex.open--;
    }
    if (this.upstream) await this.forward(m);
  }

  /**
   * Records every exchange that is whole (answered, or a notification) and no longer current. A
   * notification's waits until the server has answered something, or the session ends with the
   * server still up (see serverGone).
   */
  private finishComplete(all = false): void {
    for (const ex of [...this.open]) {
      if (ex.id !== undefined && !ex.answered) continue;
      if (ex.id === undefined && !this.serverAnswered && !(all && this.upstream)) continue;
      if (ex.open > 0 && !all) continue;
      this.close1(ex);
      if (ex.open > 0) {
        ex.turn?.finish();
        this.tape.warn(`tapedeck: ${ex.method}: the client never answered the server's request; not recorded.`);
        continue;
      }
      this.save(ex);
    }
  }

  /**
   * Appends a whole exchange, or with `cancelledMs` one the client cancelled that many ms after
   * its request; resolves once stored, to undefined, or to why it could not be.
   */
  private save(ex: Live, cancelledMs?: number): Promise<string | undefined> | undefined {
    if (!this.tape.records) return undefined;
    const last = cancelledMs ?? (ex.events.length > 0 ? ex.events[ex.events.length - 1]!.ms : this.ms(ex));
    const rec: McpRecord | McpCancelledRecord = {
      v: MCP_RECORD_VERSION,
      kind: MCP_RECORD_KIND,
      key: ex.key,
      keyVersion: MCP_KEY_VERSION,
      recordedAt: new Date(performance.timeOrigin + ex.t0).toISOString(),
      durationMs: last,
      method: ex.method,
      request: this.tape.redactor.value({ method: ex.method, ...(ex.params !== undefined ? { params: ex.params } : {}) }) as McpRecord['request'],
      events: ex.events,
      ...(cancelledMs !== undefined ? { cancelled: { ms: cancelledMs } } : {}),
      // Which session of its program made it, for a later one (its key is scoped to it).
      ...(this.ordinal > 1 ? { session: this.ordinal } : {}),
      // Which server: the session is told by it when replayed (its keys are scoped to it).
      ...(this.opts.server !== undefined ? { server: this.opts.server } : {}),
    };
    const turn = ex.turn;
    if (!turn) return this.tape.append(rec);
    // After the identical requests sent before it (Live.turn); append never rejects.
    const p = turn
      .before()
      .then(() => this.tape.append(rec))
      .finally(() => {
        turn.finish();
        this.saving.delete(p);
      });
    this.saving.add(p);
    return p;
  }

  // ------------------------------------------------------------------------------------------
  // Replay: answer from the tape
  // ------------------------------------------------------------------------------------------

  /**
   * The key of a client message in this session (its plain key, scoped to its server and number),
   * from its params as the tape stores them: secrets masked under the tape's salt (keyed masks,
   * so two secrets stay two calls). A replayed agent sends its tools what its model's recorded
   * answer holds, a masked key: that call finds the recording made with the key itself.
   */
  private keyOf(method: string, params: unknown): string {
    return mcpServerKey(mcpKey(method, params === undefined ? undefined : this.tape.redactor.value(params), this.tape.volatile), this.ordinal, this.opts.server);
  }

  /** The key an earlier release gave the message: from its params as sent, secrets included. */
  private sentKeyOf(method: string, params: unknown): string {
    return mcpServerKey(mcpKey(method, params, this.tape.volatile), this.ordinal, this.opts.server);
  }

  /** Which recordings are this session's: its number and its server (McpTape.miss lists only theirs). */
  private get scope(): { session: number; server: string | undefined } {
    return { session: this.ordinal, server: this.opts.server };
  }

  private async replayMessage(m: JsonRpcMessage & { method: string }): Promise<void> {
    const params = (m as { params?: unknown }).params;
    const key = this.keyOf(m.method, params);
    const at = this.place(m.method, key);
    // A recording made at this place of this session's history first (see the top of this file).
    let rec = this.tape.next(at, false, this.positions) ?? this.tape.next(key, false, this.positions);
    // A recording keyed by an earlier release, from params that held a secret as sent.
    if (!rec) {
      const sent = this.sentKeyOf(m.method, params);
      if (sent !== key) rec = this.tape.next(sent, false, this.positions);
    }
    // A fleet on one Redis store sees each other's recordings.
    if (!rec && (await this.tape.refresh(at).catch(() => false))) rec = this.tape.next(at, false, this.positions);
    if (!rec && (await this.tape.refresh(key).catch(() => false))) rec = this.tape.next(key, false, this.positions);
    const id = isRequest(m) ? m.id : undefined;
    if (!rec) {
      if (this.tape.mode === 'update') {
        await this.playing;
        await this.goLive();
        return this.liveMessage(m, at);
      }
      if (m.method === 'ping' && id !== undefined) {
        this.after(() => this.opts.send({ jsonrpc: '2.0', id, result: {} }, id));
        return;
      }
      const miss = this.tape.miss(m.method, params, key, this.positions, this.scope);
      (this.opts.onMiss ?? ((r: string) => process.stderr.write(`${r}\n`)))(miss.report, miss);
      if (id !== undefined) this.after(() => this.opts.send(errorResponse(id, MCP_ERROR.miss, `tapedeck miss: ${miss.message}`, { tapedeck: { method: m.method, call: miss.label, report: miss.report } }), id));
      return;
    }
    this.tape.hits++;
    const cancelledMs = id !== undefined ? cancelledAfter(rec) : undefined;
    const entry: (typeof this.history)[number] = { message: m, answers: [], ...(cancelledMs !== undefined ? { cancelled: true as const } : {}) };
    if (this.tape.mode === 'update') this.history.push(entry);
    // Recorded as cancelled: its events go out as recorded, and no answer (it has none).
    if (cancelledMs !== undefined) this.awaitCancel(m as JsonRpcRequest, key, at, cancelledMs, entry);
    this.after(() => this.play(rec, id, progressTokenOf(params), entry.answers));
  }

  /**
   * Replay of a request recorded as cancelled: waits, from now, the recorded time plus the grace
   * for the client to cancel it (handle() stops the wait). Apart from the chain of answers
   * (after()): the client may cancel it only once later calls are answered. A client that does
   * not cancel it gets a miss that says so, in order with the other answers; in update mode the
   * call goes to the live server instead, and its answer is recorded.
   */
  private awaitCancel(m: JsonRpcRequest, key: string, at: string, afterMs: number, entry: (typeof this.history)[number]): void {
    const limit = cancelWaitMs(afterMs, this.opts.cancelGraceMs ?? MCP_CANCEL_GRACE_MS);
    const stillOpen = () => !this.closed && !this.cancelled.has(m.id);
    // Not unref'd: a client awaiting this answer, with nothing else to wait for, must get it.
    const timer = setTimeout(() => {
      this.cancelWaits.delete(m.id);
      if (!stillOpen()) return;
      if (this.tape.mode === 'update') {
        // Through the gate, as every client message: the server is brought up to date first,
        // without this call (it was not cancelled: it is sent as a call of its own).
        this.gate = this.gate
          .then(async () => {
            if (!stillOpen()) return;
            const i = this.history.indexOf(entry);
            if (i >= 0) this.history.splice(i, 1);
            await this.playing;
            if (!this.live) await this.goLive();
            return this.liveMessage(m, at);
          })
          .catch((e: unknown) => this.fail(m, e));
        return;
      }
      this.after(() => {
        if (!stillOpen()) return;
        const label = callLabel(m.method, m.params);
        const miss = this.tape.missOf(m.method, m.params, key, notCancelled(label, afterMs, limit));
        this.reportMiss(miss);
        this.opts.send(errorResponse(m.id, MCP_ERROR.miss, `tapedeck miss: ${miss.message}`, { tapedeck: { method: m.method, call: miss.label, report: miss.report } }), m.id);
      });
    }, limit);
    this.cancelWaits.set(m.id, timer);
  }

  private reportMiss(miss: McpMiss): void {
    (this.opts.onMiss ?? ((r: string) => process.stderr.write(`${r}\n`)))(miss.report, miss);
  }

  /**
   * Runs `f` once every earlier exchange has played: answers go out in the order the client
   * asked, as recorded. Only replies are chained, never the handling of client messages, so the
   * client's answers to a replayed server request always get through.
   */
  private after(f: () => void | Promise<void>): void {
    this.playing = this.playing.then(f).catch((e: unknown) => this.tape.warn(`tapedeck: replay failed: ${e instanceof Error ? e.message : String(e)}`));
  }

  /**
   * Sends a recording's events in order, one per turn of the event loop at least (`gapMs`): an
   * SDK client handles notifications a microtask later than responses, so a progress
   * notification sent in the same turn as its answer would find its handler gone.
   */
  private async play(rec: McpRecord, id: JsonRpcId | undefined, token: unknown, answers: McpEvent[]): Promise<void> {
    const recordedToken = progressTokenOf(rec.request.params);
    const timing = this.opts.timing ?? 'none';
    const gap = this.opts.gapMs ?? 0;
    let prev = 0;
    for (let i = 0; i < rec.events.length; i++) {
      const ev = rec.events[i]!;
      const wait = timing === 'recorded' ? Math.max(0, ev.ms - prev) : typeof timing === 'number' ? (i > 0 ? timing : 0) : i > 0 ? gap : 0;
      if (i > 0 || wait > 0) await (wait > 0 ? sleep(wait) : new Promise<void>((r) => setImmediate(r)));
      prev = ev.ms;
      if (this.closed || (id !== undefined && this.cancelled.has(id))) return;
      if ('request' in ev) {
        if (!(await this.askClient(rec, ev, id))) return;
        answers.push(ev);
      } else this.emit(ev, id, token, recordedToken);
    }
  }

  private emit(ev: McpEvent, id: JsonRpcId | undefined, token: unknown, recordedToken: unknown): void {
    if ('response' in ev) {
      if (id === undefined) return;
      // The server's answer as it sent it, with the caller's id in the place of the recorded one.
      const answer = sentMessage(ev);
      answer.id = id;
      this.opts.send(answer as JsonRpcMessage, id);
      return;
    }
    if ('notification' in ev) {
      const n = sentMessage(ev);
      // Progress goes to the caller's own token, whatever the recording's was (set in place: the
      // members keep the server's order).
      if (n.method === 'notifications/progress' && token !== undefined && isObject(n.params) && n.params.progressToken === recordedToken) n.params.progressToken = token;
      this.opts.send(n as JsonRpcMessage, ev.standalone ? undefined : id);
    }
  }

  /** Sends a recorded server request to the client and checks its answer; a different answer is a miss. */
  private askClient(rec: McpRecord, ev: Extract<McpEvent, { request: unknown }>, id: JsonRpcId | undefined): Promise<boolean> {
    const sid = `tapedeck-${++this.seq}`;
    const limit = this.opts.clientTimeoutMs ?? 60_000;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.clientPending.delete(sid);
        resolve(this.answerMiss(rec, ev, id, `the client did not answer ${ev.request.method} within ${limit} ms`));
      }, limit);
      timer.unref?.();
      this.clientPending.set(sid, (answer) => {
        clearTimeout(timer);
        const got = answerOf(answer);
        if (this.tape.sameAnswer(got, ev.answer)) return resolve(true);
        const a = this.tape.redactor.value(got) as Record<string, unknown>;
        const b = ev.answer as Record<string, unknown>;
        const why = JSON.stringify(a).slice(0, 60);
        resolve(this.answerMiss(rec, ev, id, `the client's answer to ${ev.request.method} differs from the recorded one (got ${why}${why.length >= 60 ? '…' : ''}${'error' in b ? ', recorded an error' : ''})`));
      });
      // The server's request as it sent it, under an id of ours (the client answers to that).
      const ask = sentMessage(ev);
      ask.id = sid;
      this.opts.send(ask as JsonRpcRequest, ev.standalone ? undefined : id);
    });
  }

  private answerMiss(rec: McpRecord, ev: Extract<McpEvent, { request: unknown }>, id: JsonRpcId | undefined, difference: string): false {
    const miss = this.tape.miss(rec.method, rec.request.params, rec.key, this.positions, this.scope);
    miss.message = miss.message.replace(/^[^;\n]*/, `${miss.label}: ${difference}`);
    miss.report = `tapedeck: MCP miss in ${this.tape.location}: ${miss.label}: ${difference}\n  server request: ${ev.request.method}\n  recorded answer: ${JSON.stringify(ev.answer).slice(0, 200)}`;
    (this.opts.onMiss ?? ((r: string) => process.stderr.write(`${r}\n`)))(miss.report, miss);
    if (id !== undefined) this.opts.send(errorResponse(id, MCP_ERROR.miss, `tapedeck miss: ${miss.message}`, { tapedeck: { method: rec.method, call: miss.label, report: miss.report } }), id);
    return false;
  }

  // ------------------------------------------------------------------------------------------
  // Update mode: a miss makes the session live
  // ------------------------------------------------------------------------------------------

  private warming = false;
  private warmAnswer: ((m: JsonRpcMessage & { id: JsonRpcId }) => void) | undefined;
  private warmAnswers: McpEvent[] = [];

  /**
   * Starts the server and sends it what the client sent so far (its answers discarded; its own
   * requests answered as the client answered them on the tape), so it is in the state the
   * client believes it is in. From then on the session is live and what is missing is recorded.
   */
  private async goLive(): Promise<void> {
    if (!this.opts.upstream) {
      throw new TapedeckError('E_ARG', 'update mode needs the server to record what is missing; none was given.', { hint: 'Give the server command after --.' });
    }
    this.warming = true;
    const waiting = new Map<JsonRpcId, () => void>();
    this.warmAnswer = (m) => waiting.get(m.id)?.();
    const limit = this.opts.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
    // Every wait below ends: with its answer, or with the first failure of the warm-up (the
    // server gone, a send that failed, the timeout, the session ending). A bare wait hung the
    // session for ever, and close() with it, since close() waits for the gate this runs in.
    let failed: unknown;
    let failWaits!: (e: unknown) => void;
    const failure = new Promise<never>((_, reject) => {
      failWaits = (e) => {
        failed ??= e;
        reject(failed);
      };
    });
    void failure.catch(() => undefined);
    this.warmFail = failWaits;
    const sent = (p: Promise<void> | void): Promise<void> => Promise.race([Promise.resolve(p), failure]);
    try {
      const up = await Promise.race([this.ensureUpstream(), failure]);
      for (const h of this.history) {
        this.warmAnswers = [...h.answers];
        if (isRequest(h.message) && h.cancelled) {
          // Cancelled as recorded: sent and cancelled, no answer waited for (there may be none).
          const wid = `tapedeck-warm-${++this.seq}`;
          await sent(up.send({ ...h.message, id: wid } as JsonRpcMessage));
          await sent(up.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: wid, reason: 'tapedeck: cancelled as recorded' } } as JsonRpcMessage));
        } else if (isRequest(h.message)) {
          const wid = `tapedeck-warm-${++this.seq}`;
          const method = h.message.method;
          let timer: ReturnType<typeof setTimeout> | undefined;
          const answered = new Promise<void>((done) => {
            waiting.set(wid, done);
            timer = setTimeout(
              () => failWaits(new TapedeckError('E_UPSTREAM_TIMEOUT', `the MCP server sent no answer to ${method} within ${limit} ms while update mode brought it to the session's state, so the call that missed was not sent; nothing was recorded.`, { hint: 'A slow server: raise the timeout (tapedeck mcp --timeout MS, serve --idle-timeout MS, timeoutMs); a hung one: fix the server.' })),
              limit,
            );
            timer.unref?.();
          });
          try {
            await Promise.race([answered, failure, sent(up.send({ ...h.message, id: wid } as JsonRpcMessage)).then(() => answered)]);
          } finally {
            clearTimeout(timer);
            waiting.delete(wid);
          }
        } else await sent(up.send(h.message));
      }
    } catch (e) {
      // The server cannot be brought to the session's state: a send that failed is the server
      // gone too (it is not reachable). What the client sent is kept, so a later miss (a server
      // that may be started again: Streamable HTTP) starts from the beginning on a fresh one.
      const why = failed ?? e;
      const err = why instanceof TapedeckError ? why : new TapedeckError('E_UPSTREAM', `could not send to the MCP server: ${why instanceof Error ? why.message : String(why)}; the call that missed was not sent to it, and nothing was recorded.`, { hint: 'Check that the server runs and is reachable.' });
      await this.dropWarmServer(err);
      throw err;
    } finally {
      this.warming = false;
      this.warmAnswer = undefined;
      this.warmFail = undefined;
    }
    this.history.length = 0;
    this.live = true;
  }

  /** Fails the warm-up under way (goLive), if any: the server is gone, or the session ends. */
  private warmFail: ((e: unknown) => void) | undefined;

  /**
   * A warm-up that failed: the half-warmed server is stopped (its state is not the session's).
   * With serverOnce it is gone for good: later messages get the same error, and the transport
   * is told (`tapedeck mcp` exits 1, tapeTransport closes), as when a live server exits.
   */
  private async dropWarmServer(err: TapedeckError): Promise<void> {
    const up = this.upstream;
    // Gone already (serverGone ran: it told the transport), or it never started.
    if (!up) return;
    this.upstream = undefined;
    this.starting = undefined;
    up.onclose = undefined;
    up.onmessage = undefined;
    up.terminate?.();
    await up.close().catch(() => undefined);
    if (this.opts.serverOnce) {
      this.lost ??= err;
      this.opts.onServerGone?.(err.message);
    }
  }

  private warmServerRequest(m: JsonRpcRequest): void {
    const i = this.warmAnswers.findIndex((e) => 'request' in e && e.request.method === m.method);
    const ev = i >= 0 ? (this.warmAnswers.splice(i, 1)[0] as Extract<McpEvent, { request: unknown }>) : undefined;
    const answer = ev ? ev.answer : { error: { code: -32601, message: `tapedeck: no recorded answer to ${m.method}` } };
    void this.upstream?.send({ jsonrpc: '2.0', id: m.id, ...answer } as JsonRpcMessage);
  }

  /**
   * Ends the session: waits (at most `shutdownTimeoutMs`) for the answers to live requests still
   * on the way, records what is whole, answers nothing more, stops the live server. Resolves once
   * the records are durable.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const limit = this.opts.shutdownTimeoutMs ?? MCP_SHUTDOWN_GRACE_MS;
    // A warm-up (update mode going live) gets the shutdown grace, as answers on the way do; past
    // it the call that missed gets the error, rather than the close waiting for the timeout.
    const ending = setTimeout(() => this.warmFail?.(new TapedeckError('E_UPSTREAM', `the session ended while update mode brought the MCP server to its state (waited ${limit} ms); the call that missed was not sent, and nothing was recorded.`)), this.hurried ? 0 : limit);
    await this.gate;
    clearTimeout(ending);
    await this.playing;
    // A client that ends the session right after its last request (piped input closing stdin)
    // has not had the answers yet: they are on their way, and recorded when they come. Only a
    // request still unanswered past the grace got no answer.
    const waited = this.hurried ? false : await this.answersInFlight(limit);
    this.finishComplete(true);
    this.closed = true;
    // Replayed requests recorded as cancelled that the client neither cancelled nor waited for.
    for (const t of this.cancelWaits.values()) clearTimeout(t);
    this.cancelWaits.clear();
    for (const ex of [...this.open]) {
      if (ex.timer) clearTimeout(ex.timer);
      if (ex.id !== undefined && !ex.answered) {
        // Never recorded: cut, so an answer that still comes is dropped (the warning below holds),
        // and the records waiting behind it (Live.turn) are stored.
        this.cut(ex);
        const why = this.hurried ? ' (the session was stopped at once, by a signal)' : waited ? ` (waited ${limit} ms for it; a slow server: ${this.opts.shutdownFix ?? 'shutdownTimeoutMs, tapedeck mcp --shutdown-timeout MS'})` : '';
        this.tape.warn(`tapedeck: ${callLabel(ex.method, ex.params)} had no answer when the session ended${why}; not recorded.`);
      }
    }
    const up = this.upstream;
    this.upstream = undefined;
    if (up) {
      up.onclose = undefined;
      this.closingUpstream = up;
      if (this.hurried) up.terminate?.();
      await up.close().catch(() => undefined);
      this.closingUpstream = undefined;
    }
    // Records still waiting for their turn (see Live.turn) are appended before the flush.
    while (this.saving.size > 0) await Promise.all([...this.saving]);
    await this.tape.flush();
    // Answers held for their records go out now (the transport may still be open).
    while (this.outbox) await this.outbox;
  }

  /**
   * Makes close() quick, for a session stopped by a signal (a host quitting, Ctrl-C): the host
   * gives a process a second or two after it signals before it kills it, and record mode's
   * replacement of the calls recorded again happens only when the tape is closed. So close()
   * (begun already, or to come) no longer waits for answers still on the way (what has come is
   * recorded, the rest is not: nobody is left to receive it) and ends the live server at once
   * rather than after its grace. Call close() as well; calling hurry() again changes nothing.
   *
   * @example
   * process.on('SIGTERM', () => { session.hurry(); void session.close().then(() => tape.close()) })
   */
  hurry(): void {
    if (this.hurried) return;
    this.hurried = true;
    this.stopWaiting?.();
    this.warmFail?.(new TapedeckError('E_UPSTREAM', 'the session was stopped (a signal) while update mode brought the MCP server to its state; the call that missed was not sent, and nothing was recorded.'));
    this.closingUpstream?.terminate?.();
  }

  private hurried = false;
  /** While close() waits for answers still on the way: ends that wait (hurry). */
  private stopWaiting: (() => void) | undefined;
  /** While close() waits for the live server to end. */
  private closingUpstream: McpUpstream | undefined;

  /**
   * Waits until every live request has its answer (or was cut: timed out, cancelled, the server
   * gone), at most `limitMs`. Resolves to whether there was anything to wait for.
   */
  private async answersInFlight(limitMs: number): Promise<boolean> {
    const pending = () => this.upstream !== undefined && this.open.some((ex) => ex.id !== undefined && !ex.answered && !ex.cut);
    if (!pending()) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((done) => {
      // Not unref'd: the records of those answers must be written before the process may end.
      timer = setTimeout(done, limitMs);
      this.settled = () => {
        if (!pending()) done();
      };
      this.stopWaiting = done;
    });
    clearTimeout(timer);
    this.settled = undefined;
    this.stopWaiting = undefined;
    return true;
  }
}
