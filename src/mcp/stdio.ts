/**
 * MCP over stdio: the live server as a child process (stdioUpstream), and `tapedeck mcp`, which
 * stands in for the server on this process's stdin/stdout (runStdio). stdout carries only the
 * protocol; everything tapedeck says goes to stderr, and so does the server's own stderr.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { TapedeckError } from '../errors.ts';
import type { JsonRpcMessage } from './jsonrpc.ts';
import { readLines } from './lines.ts';
import { programSession } from './sessions.ts';
import { MCP_SHUTDOWN_GRACE_MS, McpSession, type McpTiming, type McpUpstream } from './session.ts';
import { McpTape, type McpTapeOptions } from './tape.ts';
import { serverSecrets } from './server-env.ts';
import type { ChaosOptions } from '../chaos/options.ts';

/** How the server is started. */
export interface StdioServer {
  command: string;
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** How long a server may take to exit once its stdin is closed, before it is terminated. */
const EXIT_GRACE_MS = MCP_SHUTDOWN_GRACE_MS;
/**
 * Terminated at once (a signal stopped tapedeck): how long it may take to exit on SIGTERM before
 * SIGKILL. Short: a host that signals kills tapedeck itself a second or two later.
 */
const TERMINATE_GRACE_MS = 500;

/**
 * A server process as an McpUpstream: messages are lines on its stdin and stdout; its stderr
 * is passed through to ours. `onclose` fires when it exits (with the code) or cannot start.
 *
 * @example
 * const up = stdioUpstream({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] })
 */
export function stdioUpstream(server: StdioServer, stderr: Writable = process.stderr): McpUpstream {
  let child: ChildProcess | undefined;
  let exited: Promise<void> | undefined;
  const up: McpUpstream = {
    start() {
      return new Promise<void>((resolve, reject) => {
        const c = spawn(server.command, [...(server.args ?? [])], { env: server.env ?? process.env, cwd: server.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
        child = c;
        c.stderr!.on('data', (b: Buffer) => stderr.write(b));
        exited = new Promise((done) => c.once('close', () => done()));
        c.once('spawn', () => resolve());
        c.once('error', (e: NodeJS.ErrnoException) => {
          const why = `could not start the MCP server ${JSON.stringify(server.command)}: ${e.code ?? e.message}`;
          up.onclose?.(why);
          reject(new TapedeckError('E_UPSTREAM', `${why}.`, { hint: 'Check the server command after --.' }));
        });
        c.stdin!.on('error', () => undefined); // a server that died: its exit reports it
        readLines(c.stdout!, (line) => {
          let m: unknown;
          try {
            m = JSON.parse(line);
          } catch {
            stderr.write(`tapedeck: the MCP server wrote a line that is not JSON to stdout (ignored): ${line.slice(0, 120)}\n`);
            return;
          }
          // JSON that is no JSON-RPC message (a log line as JSON) is not the protocol either: the
          // host's stdout carries only the protocol.
          const rpc = (x: unknown) => x !== null && typeof x === 'object' && (x as { jsonrpc?: unknown }).jsonrpc === '2.0';
          if (!(Array.isArray(m) ? m.length > 0 && m.every(rpc) : rpc(m))) {
            stderr.write(`tapedeck: the MCP server wrote a line that is not a JSON-RPC message to stdout (ignored): ${line.slice(0, 120)}\n`);
            return;
          }
          up.onmessage?.(m as JsonRpcMessage);
        });
        c.once('exit', (code, signal) => up.onclose?.(`the MCP server exited (${signal ? `signal ${signal}` : `code ${code}`})`));
      });
    },
    send(m) {
      child?.stdin?.write(`${JSON.stringify(m)}\n`);
    },
    terminate() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      c.kill('SIGTERM');
      const hard = setTimeout(() => c.kill('SIGKILL'), TERMINATE_GRACE_MS);
      void exited?.then(() => clearTimeout(hard));
    },
    async close() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      c.stdin?.end();
      const timer = setTimeout(() => c.kill('SIGTERM'), EXIT_GRACE_MS);
      const hard = setTimeout(() => c.kill('SIGKILL'), EXIT_GRACE_MS * 2);
      await exited;
      clearTimeout(timer);
      clearTimeout(hard);
    },
  };
  return up;
}

/** Options of runStdio (`tapedeck mcp`): the tape, the server to start, pacing, timeouts and the streams it talks over. */
export interface RunStdioOptions extends McpTapeOptions {
  /** The server; needed in record, update and passthrough mode, never started in replay. */
  server?: StdioServer;
  /** Replay pacing: everything at once (default), as recorded, or a fixed gap in ms between messages. */
  timing?: McpTiming;
  /** A live request with no answer for this long gets a timeout error (default 10 minutes). */
  timeoutMs?: number;
  /** Once stdin ends, how long answers still on the way may take (`tapedeck mcp --shutdown-timeout`). */
  shutdownTimeoutMs?: number;
  /** Replay: how much longer than recorded the client may take to cancel a call recorded as cancelled (`--cancel-grace`). */
  cancelGraceMs?: number;
  /** Faults on demand for tool calls (docs/chaos.md); `tapedeck mcp --chaos SPEC`. */
  chaos?: ChaosOptions;
  /** Where the client's messages come from, one per line (default process.stdin). */
  input?: Readable;
  /** Where the answers go, one per line (default process.stdout). */
  output?: Writable;
  /** Where tapedeck's own messages and the server's stderr go (default process.stderr). */
  stderr?: Writable;
  /**
   * Aborted when tapedeck is to stop now (`tapedeck mcp` aborts it on SIGTERM and SIGINT): the
   * session ends without waiting for answers still on the way or for the server's grace (see
   * McpSession.hurry), what was recorded is written and the tape closed, so record mode's
   * replacement happens before the host kills the process.
   */
  stop?: AbortSignal;
}

/**
 * Serves MCP on stdin/stdout through a tape until stdin ends (the host closed the session) or
 * the live server exits; resolves to the exit code (0, or 1 when the server crashed).
 *
 * @example
 * process.exitCode = await runStdio({ tape: 'tapes/fs.tape', mode: 'replay' })
 */
export async function runStdio(opts: RunStdioOptions): Promise<number> {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const stderr = opts.stderr ?? process.stderr;
  const tape = await McpTape.open({ ...opts, onWarning: opts.onWarning ?? ((m) => stderr.write(`${m}\n`)) });
  let crashed: string | undefined;
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const server = opts.server;
  // The process's one session, told by its server (the command after --, when given: the same
  // name tapeTransport gives a StdioClientTransport of that command), so that two processes given
  // one tape each replay their own server's recordings (src/mcp/sessions.ts).
  const program = programSession(tape.location, undefined, tape.mode, undefined, server ? `stdio ${JSON.stringify([server.command, ...(server.args ?? [])])}` : undefined, () => tape.sessionsOnTape());
  let session: McpSession;
  try {
    session = newSession();
  } catch (e) {
    // Chaos refused in this mode: the tape opened for nothing is closed untouched.
    program.end();
    await tape.close({ abandon: true });
    throw e;
  }
  function newSession(): McpSession {
    return new McpSession({
    tape,
    session: program.session,
    ...(program.server !== undefined ? { server: program.server } : {}),
    ...(server ? { upstream: () => stdioUpstream(server, stderr), serverEnv: serverSecrets(server.env ?? process.env) } : {}),
    // The server is the session: once it is gone, so is tapedeck (exit 1), and the messages
    // still on stdin get its error rather than a server started again.
    serverOnce: true,
    onServerGone: (why) => {
      crashed = why;
      finish();
    },
    send: (m) => output.write(`${JSON.stringify(m)}\n`),
    timing: opts.timing,
    timeoutMs: opts.timeoutMs,
    ...(opts.shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs: opts.shutdownTimeoutMs } : {}),
    ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
    // Lines written in one turn reach the client in one read: a gap keeps them apart.
    gapMs: 1,
    onMiss: (r) => stderr.write(`${r}\n`),
    ...(opts.chaos ? { chaos: opts.chaos } : {}),
  });
  }
  readLines(
    input,
    (line) => {
      let m: unknown;
      try {
        m = JSON.parse(line);
      } catch {
        output.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'tapedeck: parse error: a line on stdin is not JSON' } })}\n`);
        return;
      }
      session.fromClient(m as JsonRpcMessage);
    },
    () => finish(),
  );
  let stopped = false;
  const onStop = () => {
    stopped = true;
    session.hurry();
    finish();
  };
  if (opts.stop?.aborted) onStop();
  else opts.stop?.addEventListener('abort', onStop, { once: true });
  await done;
  await session.close();
  program.end();
  opts.stop?.removeEventListener('abort', onStop);
  const report = await tape.close({ abandon: false });
  // A run that stored nothing (a server that never answered) names no tape as recorded to: the
  // tape is as it was, absent if it was.
  if (tape.records && tape.recorded === 0) stderr.write(`tapedeck: no MCP exchange recorded; ${tape.location} not written\n`);
  else if (tape.records) stderr.write(`tapedeck: ${tape.recorded} MCP exchange(s) recorded to ${tape.location}${report.replaced.length ? `, ${report.replaced.length} replaced` : ''}\n`);
  const faults = session.chaos?.counts();
  if (faults && Object.keys(faults).length > 0) stderr.write(`tapedeck: faults injected: ${Object.entries(faults).map(([f, n]) => `${f} ${n}`).join(', ')} (seed ${session.chaos!.seed})\n`);
  if (tape.misses.length) stderr.write(`tapedeck: ${tape.misses.length} MCP miss(es); ${opts.recordCommand ?? `re-record: npx llm-tapedeck mcp --tape ${tape.location} --mode record -- <server command>`}\n`);
  // Stopped on purpose: a server that went with tapedeck (Ctrl-C reaches the whole process
  // group) did not crash.
  if (crashed && !stopped) {
    stderr.write(`tapedeck: ${crashed}\n`);
    return 1;
  }
  return 0;
}
