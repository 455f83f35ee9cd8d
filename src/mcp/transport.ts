/**
 * Record and replay at an MCP SDK client Transport, in process: no child process, no port. The
 * wrapper is itself a Transport (structurally: the SDK is not needed at run time), so a Client
 * connects to it as to the transport it wraps. In replay the wrapped transport is made (it names
 * its server) but never started (a StdioClientTransport spawns nothing, an HTTP one connects
 * nowhere).
 */
import { TapedeckError } from '../errors.ts';
import type { JsonRpcMessage } from './jsonrpc.ts';
import { McpSession, type McpTiming, type McpUpstream } from './session.ts';
import { inProcessFix, McpTape, type McpMiss, type McpTapeOptions } from './tape.ts';
import type { ChaosOptions } from '../chaos/options.ts';
import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import { REDACT_INNER } from '../store/redact-options.ts';
import { programSession, serverOf, type ProgramSession } from './sessions.ts';

/**
 * A JSON-RPC message as transports type it: loose, so the MCP SDK's and the AI SDK's own message
 * types fit without a cast.
 */
export type McpWireMessage = { jsonrpc: '2.0' } & { [key: string]: unknown };

/**
 * The shape of `Transport` from `@modelcontextprotocol/sdk/shared/transport.js` (and of
 * `MCPTransport` from `@ai-sdk/mcp`) that tapedeck uses.
 */
export interface McpTransportLike {
  start(): Promise<void>;
  send(message: McpWireMessage, options?: unknown): Promise<void>;
  close(): Promise<void>;
  // Method syntax: parameters compare both ways, so the SDKs' narrower message types fit.
  onclose?(): void;
  onerror?(error: Error): void;
  onmessage?(message: McpWireMessage, extra?: unknown): void;
  sessionId?: string;
  setProtocolVersion?: (version: string) => void;
}

/** Options of tapeTransport: the tape and its mode, replay pacing, timeouts, chaos and redaction. */
export interface TapeTransportOptions extends McpTapeOptions {
  /** Replay pacing: everything at once (default), as recorded, or a fixed gap in ms between messages. */
  timing?: McpTiming;
  /** A live request with no answer for this long gets a timeout error (default 10 minutes). */
  timeoutMs?: number;
  /** At close, how long answers still on the way may take to be recorded (default 2000 ms). */
  shutdownTimeoutMs?: number;
  /**
   * Replay of a call recorded as cancelled by the client: how much longer than recorded the
   * client may take to cancel it before it is a miss (default 2000 ms).
   */
  cancelGraceMs?: number;
  /** Called with the full report of each miss (default: stderr). */
  onMiss?: (report: string, miss: McpMiss) => void;
  /** Faults on demand for tool calls (docs/chaos.md): `{ faults: { 'tool-error': 0.2, exit: 0.1 }, seed, attempts }`. */
  chaos?: ChaosOptions;
  /**
   * Which session of the program on this tape this is, from 1 (docs/mcp.md, "Several sessions
   * on one tape"). Default: told by its server (the wrapped transport's command or URL) and
   * numbered by tapedeck; give it when the server's name differs from the recording's (paths of
   * another machine) and the program opens its sessions in an order that varies.
   */
  session?: number;
}

// The option names tapeTransport accepts (an unknown one is an E_ARG naming the nearest).
const TRANSPORT_OPTIONS = optionNames<TapeTransportOptions>()(['tape', 'mode', 'redact', 'durable', 'onWarning', 'run', 'test', 'strictOrder', 'recordCommand', 'timing', 'timeoutMs', 'shutdownTimeoutMs', 'cancelGraceMs', 'onMiss', 'chaos', 'session', 'volatileText', 'volatileKeys']);

/** A taped Transport: a Transport, and the tape behind it for counters and misses. */
export interface TapeTransport extends McpTransportLike {
  /** Resolves to the open tape (after start()). */
  readonly tape: Promise<McpTape>;
  /** Injected faults by name so far (chaos), empty without chaos. */
  faults(): Record<string, number>;
}

/** The wrapped transport as the session's live server; `made`: the one made already, if any. */
function transportUpstream(inner: McpTransportLike | (() => McpTransportLike), made?: McpTransportLike): McpUpstream {
  let t: McpTransportLike | undefined;
  const up: McpUpstream = {
    async start() {
      t = made ?? (typeof inner === 'function' ? inner() : inner);
      made = undefined;
      t.onmessage = (m) => up.onmessage?.(m as unknown as JsonRpcMessage);
      t.onclose = () => up.onclose?.('the MCP transport closed');
      t.onerror = () => undefined; // a failed send or a dropped stream ends in onclose or a missing answer
      await t.start();
    },
    send: (m) => t!.send(m as unknown as McpWireMessage),
    close: async () => {
      if (t) {
        t.onclose = undefined;
        await t.close();
      }
    },
  };
  return up;
}

/**
 * Wraps a client Transport of `@modelcontextprotocol/sdk` so the Client's exchanges are recorded
 * to a tape, or answered from it. Give the transport itself, or a function that makes it (in
 * replay it is called, to name the server, but the transport is never started). `tape.close()` happens in the transport's close().
 *
 * @example
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js'
 * import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
 * import { tapeTransport } from 'llm-tapedeck/mcp'
 * const client = new Client({ name: 'agent', version: '1.0.0' })
 * await client.connect(tapeTransport(new StdioClientTransport({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] }), { tape: 'tapes/memory.tape' }))
 */
export function tapeTransport(inner: McpTransportLike | (() => McpTransportLike) | undefined, opts: TapeTransportOptions): TapeTransport {
  checkOptionsObject(opts, 'tapeTransport', "tapeTransport(transport, { tape: 'tapes/memory.tape' })", 'an options object as its second argument');
  checkOptionNames(opts, TRANSPORT_OPTIONS, 'tapeTransport', 'docs/mcp.md', REDACT_INNER);
  const mode = McpTape.check(opts);
  let session: McpSession | undefined;
  let opened: McpTape | undefined;
  /** This session's place among the program's sessions on the tape. */
  let program: ProgramSession | undefined;
  /** The one close, which every close() call waits for. */
  let closing: Promise<void> | undefined;
  let resolveTape!: (t: McpTape) => void;
  const tape = new Promise<McpTape>((r) => (resolveTape = r));
  // One message per turn of the event loop, live or replayed: the SDK Client handles a
  // notification a microtask after it arrives but a response at once, so a progress
  // notification delivered in the same turn as its answer finds its handler gone.
  const queue: JsonRpcMessage[] = [];
  let draining = false;
  const drain = () => {
    const m = queue.shift();
    if (m === undefined) {
      draining = false;
      return;
    }
    self.onmessage?.(m as unknown as McpWireMessage);
    setImmediate(drain);
  };
  const deliver = (m: JsonRpcMessage) => {
    queue.push(m);
    if (!draining) {
      draining = true;
      setImmediate(drain);
    }
  };
  const self: TapeTransport = {
    tape,
    faults: () => session?.chaos?.counts() ?? {},
    async start() {
      // In process there is no command line: a miss names the option that records, and the tape.
      const where = typeof opts.tape === 'string' ? opts.tape : opts.tape?.location;
      opened = await McpTape.open({ ...opts, mode, recordCommand: opts.recordCommand ?? `${inProcessFix('tapeTransport(transport, { tape, mode: ', opts.mode)}${where ? ` (tape: ${where})` : ''}` });
      const tapeNow = opened;
      // The transport is made now (never started in replay): it names its server, which tells
      // this session among the program's (src/mcp/sessions.ts). Recording makes it anyway, at the
      // first message. A factory that throws names no server; recording calls it again then,
      // and its error answers that message as before.
      let made: McpTransportLike | undefined = typeof inner === 'object' ? inner : undefined;
      if (typeof inner === 'function') {
        try {
          made = inner();
        } catch {
          made = undefined;
        }
      }
      if (opts.session !== undefined && (!Number.isInteger(opts.session) || opts.session < 1)) {
        await tapeNow.close({ abandon: true });
        throw new TapedeckError('E_ARG', `tapeTransport: session must be a whole number from 1, got ${JSON.stringify(opts.session)}.`, { hint: 'Number the sessions of your program 1, 2, … in the order it opens them (docs/mcp.md, "Several sessions on one tape"), or leave session out.' });
      }
      program = programSession(opened.location, opts.test, opened.mode, opts.session, serverOf(made), () => opened!.sessionsOnTape());
      if (mode === 'once' && opened.mode === 'replay' && !program.onTape) {
        // `once` records what the tape does not have: here, anything of this session's server
        // (another server's sessions are on it, never served to this one).
        program.end();
        await opened.close({ abandon: true });
        opened = await McpTape.open({ ...opts, mode: 'record', recordCommand: opts.recordCommand ?? `${inProcessFix('tapeTransport(transport, { tape, mode: ', opts.mode)}${where ? ` (tape: ${where})` : ''}` });
        program = programSession(opened.location, opts.test, opened.mode, opts.session, serverOf(made), () => opened!.sessionsOnTape());
      }
      resolveTape(opened);
      try {
        session = new McpSession({
          tape: opened,
          ...(inner ? { upstream: () => transportUpstream(inner, made) } : {}),
          session: program.session,
          ...(program.server !== undefined ? { server: program.server } : {}),
          firstPlace: program.firstPlace,
          send: deliver,
          timing: opts.timing,
          timeoutMs: opts.timeoutMs,
          ...(opts.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: opts.shutdownTimeoutMs } : {}),
          ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
          onMiss: opts.onMiss,
          ...(opts.chaos ? { chaos: opts.chaos } : {}),
          // The wrapped transport closed under the session: the client is told, as it would be,
          // once it has the errors of its open requests (and it is not started again).
          serverOnce: true,
          onServerGone: () => {
            const closeWhenDelivered = (): void => {
              if (draining) setImmediate(closeWhenDelivered);
              else void self.close();
            };
            setImmediate(closeWhenDelivered);
          },
        });
      } catch (e) {
        // Chaos refused in this mode: the tape opened for nothing is closed untouched.
        program.end();
        await opened.close({ abandon: true });
        throw e;
      }
    },
    async send(m) {
      if (!session) throw new Error('tapedeck: send() before start(): connect the client to the transport first.');
      session.fromClient(m as unknown as JsonRpcMessage);
    },
    close() {
      // A second close (the SDK Client closes its transport itself when connect fails, and the
      // caller then closes the client) resolves when the tape is closed too, not at once.
      closing ??= (async () => {
        await session?.close();
        program?.end();
        await opened?.close();
        self.onclose?.();
      })();
      return closing;
    },
    setProtocolVersion(v: string) {
      const t = typeof inner === 'object' ? inner : undefined;
      t?.setProtocolVersion?.(v);
    },
  };
  return self;
}
