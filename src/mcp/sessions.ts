/**
 * The sessions of one program on one MCP tape (docs/mcp.md, "Several sessions on one tape"):
 * which session of its program each tapeTransport is, so that a program's sessions (several
 * servers, or one server in several states) are each recorded apart and replayed with their own
 * recordings, never another session's.
 *
 * A program is the sessions this process opens on a tape in one mode, one after the other or at
 * once, until it opens the tape in another mode (a test that records and then replays in one
 * process is two programs). Within it:
 * - recording, a session is numbered by its server (the command and arguments, or the URL, of
 *   the transport it wraps): the first server is session 1, the next other server session 2, and
 *   so on; the same server again is the same session number (recording it again replaces what it
 *   recorded, as a record run does), unless a session of that number is open at the same time.
 *   So sessions open at once always have numbers of their own;
 * - replaying (the server is not made, so not known), sessions are numbered in the order they
 *   start, counting again from 1 past the last number the tape holds (a program run twice in one
 *   process); a tape with one session number (every tape written before sessions were numbered)
 *   serves every session as session 1, as before.
 * Identities never leave the process: only the session number is stored.
 */

/** What the program knows of its sessions on one tape (per test, on a tape tests share). */
interface Program {
  mode: string;
  /** Sessions begun, for replay's numbering. */
  begun: number;
  /** The numbers of the sessions open now. */
  open: Map<number, number>;
  /** Record mode: the session number of each server. */
  servers: Map<string, number>;
  /** Record mode: which session first recorded each key in this program, and where (its context key). */
  first: Map<string, { by: object; at: string }>;
}

const programs = new Map<string, Program>();

/** One session's place in its program: its number, and the record-mode rule of its keys. */
export interface ProgramSession {
  session: number;
  /** Record mode: see McpSessionOptions.firstPlace. */
  firstPlace: (key: string, at: string) => boolean;
  /** The session ended: its number is free for a later session. */
  end(): void;
}

/**
 * A stable name of the server a client Transport reaches, when it says: the command and
 * arguments of a stdio transport (the MCP SDK's and the AI SDK's), the URL of an HTTP one.
 * Undefined for transports that do not show it (then every such session is one server).
 *
 * @example
 * serverOf(new StdioClientTransport({ command: 'node', args: ['server.js'] })) // 'stdio ["node","server.js"]'
 */
export function serverOf(transport: unknown): string | undefined {
  if (transport === null || typeof transport !== 'object') return undefined;
  const t = transport as Record<string, unknown>;
  const params = (t._serverParams ?? t.serverParams) as { command?: unknown; args?: unknown } | undefined;
  if (params && typeof params.command === 'string') return `stdio ${JSON.stringify([params.command, ...(Array.isArray(params.args) ? params.args : [])])}`;
  const url = t._url ?? t.url;
  if (url instanceof URL || typeof url === 'string') return `url ${String(url)}`;
  return undefined;
}

/**
 * Numbers a session of the program on `tape` (its location; `test`, the test on a tape tests
 * share) in `mode`. `explicit`: the number the caller gave (the test helpers number a test's
 * sessions themselves); `server`: serverOf the wrapped transport, when recording;
 * `sessionsOnTape`: the highest session number the tape holds (asked only when replaying).
 *
 * @example
 * const s = programSession('tapes/agent.tape', undefined, 'record', undefined, 'stdio ["node","memory.js"]', () => 1)
 * new McpSession({ tape, send, session: s.session, firstPlace: s.firstPlace })
 */
export function programSession(tape: string, test: string | undefined, mode: string, explicit: number | undefined, server: string | undefined, sessionsOnTape: () => number): ProgramSession {
  const at = `${tape}\0${test ?? ''}`;
  let p = programs.get(at);
  if (!p || p.mode !== mode) {
    p = { mode, begun: 0, open: new Map(), servers: new Map(), first: new Map() };
    programs.set(at, p);
  }
  const prog = p;
  const isOpen = (n: number) => (prog.open.get(n) ?? 0) > 0;
  let session: number;
  if (explicit !== undefined) {
    // A tape with no later session (one written before sessions were numbered) serves every
    // session as its first, as it did: a later number would miss everything on it.
    session = explicit > 1 && mode !== 'record' && mode !== 'passthrough' && sessionsOnTape() <= 1 ? 1 : explicit;
  } else if (mode === 'record') {
    const id = server ?? '(a transport that does not name its server)';
    const mine = prog.servers.get(id);
    if (mine !== undefined && !isOpen(mine)) session = mine;
    else {
      // A new server, or the same one open twice at once: the first number nobody holds.
      const taken = new Set(prog.servers.values());
      session = 1;
      while (isOpen(session) || taken.has(session)) session++;
      if (mine === undefined) prog.servers.set(id, session);
    }
  } else if (prog.begun === 0) {
    // The program's first session is session 1, whatever the tape holds: asking the tape reads
    // every recording, which a program of one session (the usual case) need not pay for.
    session = 1;
  } else {
    const n = sessionsOnTape();
    session = n <= 1 ? 1 : (prog.begun % n) + 1;
    // One open at once already holds it (a program that opens its sessions in another order).
    for (let i = 0; n > 1 && i < n && isOpen(session); i++) session = (session % n) + 1;
  }
  prog.begun++;
  prog.open.set(session, (prog.open.get(session) ?? 0) + 1);
  let ended = false;
  const me = {};
  return {
    session,
    firstPlace(key, place) {
      const first = prog.first.get(key);
      if (first === undefined) prog.first.set(key, { by: me, at: place });
      // This session's own repeats of a call are its k-th recordings, as ever.
      return first === undefined || first.by === me || first.at === place;
    },
    end() {
      if (ended) return;
      ended = true;
      prog.open.set(session, (prog.open.get(session) ?? 1) - 1);
    },
  };
}
