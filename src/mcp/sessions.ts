/**
 * The sessions of one program on one MCP tape (docs/mcp.md, "Several sessions on one tape"):
 * which session of its program each tapeTransport (or `tapedeck mcp` process) is, so that a
 * program's sessions (several servers, or one server in several states) are each recorded apart
 * and replayed with their own recordings, never another session's or another server's.
 *
 * A session is told by its server (the command and arguments, or the URL, of the transport it
 * wraps) and by a number. Its records carry a digest of the server (`server`) and its number
 * (`session`, when above 1), and its keys are scoped to both, so two servers never share a
 * recording, however their sessions are numbered, even recorded by two processes at once.
 *
 * A program is the sessions this process opens on a tape in one mode, one after the other or at
 * once, until it opens the tape in another mode (a test that records and then replays in one
 * process is two programs). Within it:
 * - recording, a session is numbered by its server: the first server is session 1, the next
 *   other server session 2, and so on; the same server again is the same session number
 *   (recording it again replaces what it recorded, as a record run does), unless a session of
 *   that number is open at the same time. So sessions open at once always have numbers of their
 *   own;
 * - replaying (update and once too), a session takes its server's session on the tape. A session
 *   whose server has none there under its name (a transport that does not name its server, or
 *   a server command whose paths differ from the recording machine's) takes the tape's sessions
 *   this program has not taken yet, in the order they were recorded; when there is none left, a
 *   server that names itself has nothing recorded (a miss in replay; update mode records it as a
 *   new session), and one that does not is served the tape's sessions again in order (a program
 *   run twice in one process).
 * A tape of an older release (no record names its server) is numbered as it was: in replay, in
 * the order sessions start, and a tape with one session number serves every session as session 1.
 * A transport that does not name its server (a wrapper of your own) is numbered and keyed as
 * before servers were named: by the order sessions start.
 * Identities never leave the process: only their digest and the session number are stored.
 */
import { hashValue } from '../core/index.ts';

/** What a tape holds of its sessions (McpTape.sessionsOnTape). */
export interface TapeSessions {
  /** Whether it holds MCP records at all. */
  any: boolean;
  /** Whether any of them names its server (written by this release or a later one). */
  told: boolean;
  /** The highest session number (0 on an empty tape). */
  max: number;
  /** The sessions it holds, each once, in the order their first record is met. */
  slots: { session: number; server: string | undefined }[];
}

/** What the program knows of its sessions on one tape (per test, on a tape tests share). */
interface Program {
  mode: string;
  /** Sessions begun, for replay's numbering. */
  begun: number;
  /** The sessions open now, by slot (slotName). */
  open: Map<string, number>;
  /** Record mode: the session number of each server. */
  servers: Map<string, number>;
  /** Replay: the tape session each server that names itself took. */
  assigned: Map<string, { session: number; server: string | undefined }>;
  /** Replay: the tape sessions this program took (slotName). */
  taken: Set<string>;
  /** Record mode: which session first recorded each key in this program, and where (its context key). */
  first: Map<string, { by: object; at: string }>;
}

const programs = new Map<string, Program>();

/**
 * The sessions of each tape (and test) that a session of this process took under its own
 * server's name, in any mode: one that another server takes by position is not its own
 * (ProgramSession.onTape: `once` records that server rather than replay another's).
 */
const named = new Map<string, Set<string>>();

/** One session's place in its program: its number and server, and the record-mode rule of its keys. */
export interface ProgramSession {
  session: number;
  /**
   * The digest of its server, which scopes its keys and is stored with its records (undefined on
   * a tape of an older release, keyed as it was).
   */
  server: string | undefined;
  /**
   * Replay: whether the tape holds this session: its server's, or one taken by position that no
   * other server of this process took by its name (false: nothing of it is recorded there).
   */
  onTape: boolean;
  /** Record mode: see McpSessionOptions.firstPlace. */
  firstPlace: (key: string, at: string) => boolean;
  /** The session ended: its number is free for a later session. */
  end(): void;
}

/** Record mode: the name of every session whose transport does not name its server (one server). */
const UNNAMED = '(a transport that does not name its server)';

/**
 * The digest of a server's name (serverOf) that a tape stores: the name itself (a command line
 * may hold a path or a token) never leaves the process.
 *
 * @example
 * serverDigest('stdio ["node","memory.js"]') // 16 hex digits
 */
export function serverDigest(name: string): string {
  return hashValue({ mcpServer: name }).slice(0, 16);
}

const slotName = (s: { session: number; server: string | undefined }) => `${s.session}\0${s.server ?? ''}`;

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
 * sessions themselves); `server`: serverOf the wrapped transport (undefined when it does not
 * say); `onTape`: what the tape holds of its sessions (asked only when needed: it reads every
 * recording).
 *
 * @example
 * const s = programSession('tapes/agent.tape', undefined, 'record', undefined, 'stdio ["node","memory.js"]', () => tape.sessionsOnTape())
 * new McpSession({ tape, send, session: s.session, server: s.server, firstPlace: s.firstPlace })
 */
export function programSession(tape: string, test: string | undefined, mode: string, explicit: number | undefined, server: string | undefined, onTape: () => TapeSessions): ProgramSession {
  const at = `${tape}\0${test ?? ''}`;
  let p = programs.get(at);
  if (!p || p.mode !== mode) {
    p = { mode, begun: 0, open: new Map(), servers: new Map(), assigned: new Map(), taken: new Set(), first: new Map() };
    programs.set(at, p);
  }
  const prog = p;
  const records = mode === 'record' || mode === 'passthrough';
  // A transport that does not name its server is keyed, stored and numbered as before servers
  // were named (so its sessions are told apart by number alone).
  const own = server === undefined ? undefined : serverDigest(server);
  const isOpen = (s: { session: number; server: string | undefined }) => (prog.open.get(slotName(s)) ?? 0) > 0;
  const numberOpen = (n: number) => [...prog.open].some(([k, c]) => c > 0 && k.startsWith(`${n}\0`));
  let info: TapeSessions | undefined;
  const held = () => (info ??= onTape());
  let slot: { session: number; server: string | undefined };
  if (!records && held().any && !held().told) {
    // A tape of an older release: numbered, and keyed, as that release did.
    slot = { session: olderSession(prog, mode, explicit, held().max, numberOpen), server: undefined };
  } else if (explicit !== undefined) {
    // The caller's number; a server whose name the tape does not hold (recorded elsewhere) takes
    // the server of that number on the tape.
    const there = records || held().slots.some((s) => s.server === own) ? undefined : held().slots.find((s) => s.session === explicit);
    slot = { session: explicit, server: there?.server ?? own };
  } else if (records) {
    const id = server ?? UNNAMED;
    const mine = prog.servers.get(id);
    if (mine !== undefined && !numberOpen(mine)) slot = { session: mine, server: own };
    else {
      // A new server, or the same one open twice at once: the first number nobody holds.
      const taken = new Set(prog.servers.values());
      let n = 1;
      while (numberOpen(n) || taken.has(n)) n++;
      if (mine === undefined) prog.servers.set(id, n);
      slot = { session: n, server: own };
    }
  } else {
    slot = replaySlot(prog, server, own, held(), isOpen);
  }
  const byName = own !== undefined && slot.server === own;
  // Taken by position by a server that names itself, it is the session another server of this
  // process took by its name (a transport that does not name its server may be any of them).
  const others = own !== undefined && !byName && (named.get(at)?.has(slotName(slot)) ?? false);
  if (byName) {
    if (!named.has(at)) named.set(at, new Set());
    named.get(at)!.add(slotName(slot));
  }
  prog.begun++;
  prog.taken.add(slotName(slot));
  prog.open.set(slotName(slot), (prog.open.get(slotName(slot)) ?? 0) + 1);
  let ended = false;
  const me = {};
  return {
    session: slot.session,
    server: slot.server,
    onTape: info !== undefined && !others && (!info.told || info.slots.some((s) => s.session === slot.session && s.server === slot.server)),
    firstPlace(key, place) {
      const first = prog.first.get(key);
      if (first === undefined) prog.first.set(key, { by: me, at: place });
      // This session's own repeats of a call are its k-th recordings, as ever.
      return first === undefined || first.by === me || first.at === place;
    },
    end() {
      if (ended) return;
      ended = true;
      prog.open.set(slotName(slot), (prog.open.get(slotName(slot)) ?? 1) - 1);
    },
  };
}

/** Replay, update and once: the tape session a session of `server` (its digest `own`) takes. */
function replaySlot(prog: Program, server: string | undefined, own: string | undefined, held: TapeSessions, isOpen: (s: { session: number; server: string | undefined }) => boolean): { session: number; server: string | undefined } {
  const before = server === undefined ? undefined : prog.assigned.get(server);
  if (before && !isOpen(before)) return before;
  const fresh = () => {
    // Nothing of it on the tape: a session number nobody holds (a miss in replay; update mode
    // records it there).
    let n = Math.max(held.max, 0);
    for (const k of prog.taken) n = Math.max(n, Number(k.slice(0, k.indexOf('\0'))));
    return { session: n + 1, server: own };
  };
  // Its server's own session on the tape (the first not open now: the same server open twice).
  let slot = held.slots.find((s) => s.server === own && !isOpen(s));
  if (!slot && held.slots.some((s) => s.server === own)) slot = fresh();
  // Not on the tape under its name (a command whose paths differ from the recording
  // machine's): the tape's sessions this program has not taken, in order.
  slot ??= held.slots.find((s) => !prog.taken.has(slotName(s)) && !isOpen(s));
  if (!slot && server === undefined && held.slots.length > 0) {
    // Every one taken, by a transport that does not name its server: the program again.
    const n = held.slots.length;
    for (let i = 0; i < n && !slot; i++) {
      const s = held.slots[(prog.begun + i) % n]!;
      if (!isOpen(s)) slot = s;
    }
  }
  slot ??= fresh();
  if (server !== undefined) prog.assigned.set(server, slot);
  return slot;
}

/** The session number on a tape of an older release (no record names its server), as it was given then. */
function olderSession(prog: Program, mode: string, explicit: number | undefined, sessionsOnTape: number, isOpen: (n: number) => boolean): number {
  const n = Math.max(sessionsOnTape, 1);
  // A tape with no later session (one written before sessions were numbered) serves every
  // session as its first, as it did: a later number would miss everything on it.
  if (explicit !== undefined) return explicit > 1 && mode !== 'record' && mode !== 'passthrough' && n <= 1 ? 1 : explicit;
  if (prog.begun === 0 || n <= 1) return 1;
  let session = (prog.begun % n) + 1;
  // One open at once already holds it (a program that opens its sessions in another order).
  for (let i = 0; i < n && isOpen(session); i++) session = (session % n) + 1;
  return session;
}

/**
 * The recordings a session of `tapedeck serve` replays (its clients are not one program: each
 * session is a first session, and the proxy does not know the server's name): on a tape whose
 * records name their server (recorded by tapeTransport or `tapedeck mcp`), the first session
 * recorded there; else session 1, keyed as serve records it.
 *
 * @example
 * const { session, server } = servedSession(tape.sessionsOnTape())
 */
export function servedSession(held: TapeSessions): { session: number; server: string | undefined } {
  if (!held.told) return { session: 1, server: undefined };
  return held.slots.find((s) => s.server === undefined && s.session === 1) ?? held.slots[0] ?? { session: 1, server: undefined };
}
