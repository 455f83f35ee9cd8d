/**
 * An MCP tape: MCP exchange records in the one recording collection (any backend: tape file,
 * Redis, memory), the mode, the redactor, the counters and the misses. Transports (stdio,
 * Streamable HTTP, an SDK transport) share it through McpSession (session.ts).
 */
import { hashValue } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { checkOptionsObject } from '../option-names.ts';
import { missHeadline } from '../match/diagnose.ts';
import type { TapeMode } from '../store/mode.ts';
import type { CloseReport, RecordKind } from '../store/collection.ts';
import { MCP_RECORD_KIND, mcpRecords, type McpRecord } from '../store/records.ts';
import { appendFailureCause, openSessionCollection, SessionTape, sessionTapeMode, type SessionTapeOptions } from '../store/session-tape.ts';
import { differenceCount, firstDifference, keyParams, mcpRecordKeys, type McpVolatile } from './key.ts';
import { volatilePatterns } from '../providers/volatile-text.ts';
import { mcpUsageMark } from './usage-mark.ts';
import type { TapeSessions } from './sessions.ts';

/** Options of an MCP tape, shared by every entry point. */
export interface McpTapeOptions extends SessionTapeOptions {
  /** Past the last recording of a call, a further identical call is a miss (default: the last answer again). */
  strictOrder?: boolean;
  /** How to record again, in the words of the entry point (shown with every miss). */
  recordCommand?: string;
  /**
   * Regular expressions (or their sources) whose matches in any string of a call's params are
   * left out of its key, as for the model's requests (docs/matching.md, "Volatile text"):
   * `[VOLATILE_PATTERNS.isoTimestamp, VOLATILE_PATTERNS.uuid]`.
   */
  volatileText?: readonly (RegExp | string)[];
  /** Member names left out of a call's key at any depth of its params (a `nonce`, a `requestId`). */
  volatileKeys?: readonly string[];
}

/** The volatile options as keying takes them; E_ARG for a bad pattern or list. */
function volatileOf(opts: McpTapeOptions): McpVolatile | undefined {
  const text = volatilePatterns(opts.volatileText);
  const keys = opts.volatileKeys;
  if (keys !== undefined && (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string'))) {
    throw new TapedeckError('E_ARG', `volatileKeys must be an array of member names; got ${JSON.stringify(keys)}.`, { hint: "e.g. { volatileKeys: ['nonce'] } (tapedeck mcp --volatile-key nonce)." });
  }
  return text.length > 0 || (keys?.length ?? 0) > 0 ? { text, keys: new Set(keys ?? []) } : undefined;
}

/**
 * How to record again, for an MCP tape opened in code (there is no command line to name): the
 * mode option, and TAPEDECK_MODE too when the code sets no mode (an explicit option wins over
 * the environment, so then only the option records).
 *
 * @example
 * inProcessFix('tapeTransport(transport, { tape, mode: ', undefined)
 * // "re-record: tapeTransport(transport, { tape, mode: 'record' }) (or TAPEDECK_MODE=record)"
 */
export function inProcessFix(call: string, mode: string | undefined): string {
  return `re-record: ${call}'record' })${mode === undefined ? ' (or TAPEDECK_MODE=record)' : ''}`;
}

/**
 * A session's place among the recordings of each key: how many of each it was served
 * (McpTape.positions, McpTape.next).
 */
export type McpPositions = Map<string, number>;

/** One miss, as the run summary and the stderr report show it. */
export interface McpMiss {
  method: string;
  /** The method and what names the call (`tools/call read_file`). */
  label: string;
  /** One line: what differs from the closest recording, and how to re-record. */
  message: string;
  /** The whole diagnosis. */
  report: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What names a tool or a prompt call (`params.name`), as keyed: calls of other names are other calls. */
const nameOf = (params: unknown): string | undefined => (isObject(params) && typeof params.name === 'string' ? params.name : undefined);

/** Which session of which server a record is of (session 1, and no server, when it does not say). */
const scopeOf = (value: unknown): { session: number; server: string | undefined } => {
  const v = value as { session?: unknown; server?: unknown };
  return { session: typeof v.session === 'number' && Number.isInteger(v.session) && v.session > 1 ? v.session : 1, server: typeof v.server === 'string' ? v.server : undefined };
};

const EXAMPLE = 'tapedeck mcp --tape tapes/server.tape -- <server command>';

/**
 * A call as people name it: the method, and the tool, prompt or resource it is about.
 *
 * @example
 * callLabel('tools/call', { name: 'read_file', arguments: { path: 'a' } }) // 'tools/call read_file'
 */
export function callLabel(method: string, params: unknown): string {
  if (!isObject(params)) return method;
  const what = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  return what === undefined ? method : `${method} ${what.length > 60 ? `${what.slice(0, 59)}…` : what}`;
}

/** A value in a one-line message: short, and for long strings the end (where paths and names differ). */
const shown = (v: unknown): string => {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v) ?? String(v);
  if (s.length <= 40) return s;
  return typeof v === 'string' ? `"…${s.slice(-30)}` : `${s.slice(0, 39)}…`;
};

/**
 * @example
 * const tape = await McpTape.open({ tape: 'tapes/fs.tape', mode: 'replay' })
 * const rec = tape.next(mcpKey('tools/list', {}))
 */
/** MCP records, found under their key by the current rules (older `initialize` keys recomputed). */
const MCP_KIND: RecordKind<McpRecord> = {
  ...mcpRecords,
  headFields: ['kind', 'key', 'keyVersion', 'method'],
  keysOf: (head, value) => (head.kind === MCP_RECORD_KIND ? mcpRecordKeys(head, value) : undefined),
};

/** A tape of MCP exchanges: what tapeTransport, tape.mcp() and `tapedeck mcp` record and replay. */
export class McpTape extends SessionTape<McpRecord> {
  readonly misses: McpMiss[] = [];
  hits = 0;
  /** Exchanges stored (counted once they are). */
  recorded = 0;
  /**
   * Of those, the ones that took the place of an earlier run's recording of the same call (record
   * mode), known once close() has run: a run summary says them re-recorded, not added.
   */
  rerecorded = 0;
  /**
   * Marks (mcpUsageMark) of the recordings this tape served or stored, and after close() in
   * record mode those of calls made again whose new exchange was not stored: a run summary
   * counts the others on the tape as unused, as it does HTTP recordings no call was answered with.
   */
  readonly used = new Set<string>();
  /**
   * Update mode: the keys a live session of this tape stored a call under, new to the tape then
   * (McpSession.recordKey): a further live call of one is stored at its session's place.
   */
  readonly claimed = new Set<string>();
  private readonly opts: McpTapeOptions;
  /** What the keys of this tape's sessions leave out (volatileText, volatileKeys). */
  readonly volatile: McpVolatile | undefined;

  private constructor(opts: McpTapeOptions, opened: Awaited<ReturnType<typeof openSessionCollection<McpRecord>>>) {
    // Private, but plain JavaScript can still call it: say how a tape is opened instead.
    checkOptionsObject(opened, 'McpTape', "await McpTape.open({ tape: 'tapes/fs.tape' })", 'an open tape: it is made by McpTape.open');
    super(opts, opened);
    this.opts = opts;
    this.volatile = volatileOf(opts);
  }

  /**
   * Opens the tape (created in record and update mode). A bad mode or a missing tape option is
   * a TapedeckError before anything runs.
   */
  static async open(opts: McpTapeOptions): Promise<McpTape> {
    checkOptionsObject(opts, 'McpTape.open', "await McpTape.open({ tape: 'tapes/fs.tape' })");
    return new McpTape(opts, await openSessionCollection(opts, MCP_KIND, EXAMPLE));
  }

  /** Resolves the mode and checks the options without opening anything. */
  static check(opts: McpTapeOptions): TapeMode {
    volatileOf(opts);
    return sessionTapeMode(opts, EXAMPLE);
  }

  /**
   * What the collection gave for each turn of a key so far, in order, whichever session asked
   * first: a session at turn k that another session passed already gets the same outcome (the
   * recording, none when it expired, or the error of a damaged one) without taking a turn of
   * the collection, whose own count is one per tape.
   */
  private readonly handedOut = new Map<string, ({ rec: McpRecord | undefined } | { error: unknown })[]>();
  /** The positions of callers that bring none (one session per tape: stdio, tapeTransport). */
  private readonly ownPositions: McpPositions = new Map();

  /**
   * A fresh set of positions, all at the first recording of each key: one per session, so that
   * each session on a tape several share (tapedeck serve) replays from the first recording of
   * each call, whatever the other sessions did before, as a session on a tape of its own does.
   *
   * @example
   * const mine = tape.positions()
   * tape.next(key, false, mine) // the first recording of key, for this session
   */
  positions(): McpPositions {
    return new Map();
  }

  /**
   * The next recording of a key for the session whose `positions` are given (k-th call of that
   * session, k-th recording); past the last, the last again unless strictOrder (or `once`).
   *
   * @example
   * tape.next(mcpKey('tools/list', {}), false, session) // first call: the first recording
   */
  next(key: string, once = false, positions: McpPositions = this.ownPositions): McpRecord | undefined {
    const col = this.col;
    if (!col) return undefined;
    let list = this.handedOut.get(key);
    const k = positions.get(key) ?? 0;
    if (k >= (list?.length ?? 0)) {
      const { served, recorded } = col.count(key);
      // The first session to reach this turn takes it from the collection, which decides what
      // it is (the recording, or damage said as such).
      if (served < recorded) {
        if (!list) this.handedOut.set(key, (list = []));
        try {
          list.push({ rec: col.next(key) });
        } catch (e) {
          list.push({ error: e });
        }
      }
    }
    if (list && k < list.length) {
      positions.set(key, k + 1);
      const o = list[k]!;
      if ('error' in o) throw o.error;
      if (o.rec) this.used.add(mcpUsageMark(o.rec));
      return o.rec;
    }
    // Past the last recording: the position stays, so a recording stored later (another
    // writer's, refresh) is this session's next.
    if (once || this.opts.strictOrder === true) return undefined;
    const rec = col.next(key, { repeatLast: true });
    if (rec) this.used.add(mcpUsageMark(rec));
    return rec;
  }

  private sessionsHeld: TapeSessions | undefined;

  /**
   * What the tape holds of its sessions: each session (its number, and the digest of its server
   * when its records name it), in the order first met; the highest number (0 on an empty tape);
   * whether any record names its server. How a program's sessions find theirs
   * (src/mcp/sessions.ts). Read once, from the recordings loaded.
   *
   * @example
   * tape.sessionsOnTape().slots // [{ session: 1, server: 'a1b2…' }, { session: 2, server: 'c3d4…' }]
   */
  sessionsOnTape(): TapeSessions {
    if (this.sessionsHeld !== undefined) return this.sessionsHeld;
    const held: TapeSessions = { any: false, told: false, max: 0, slots: [] };
    const seen = new Set<string>();
    try {
      for (const { value } of this.col?.entries() ?? []) {
        const { session: s, server } = scopeOf(value);
        held.any = true;
        if (server !== undefined) held.told = true;
        held.max = Math.max(held.max, s);
        const name = `${s}\0${server ?? ''}`;
        if (!seen.has(name)) {
          seen.add(name);
          held.slots.push({ session: s, server });
        }
      }
    } catch {
      // A damaged record: said where it is served; the sessions read so far stand.
    }
    this.sessionsHeld = held;
    return held;
  }

  /** Whether others write the store while this tape is open (Redis): see {@link refresh}. */
  get shared(): boolean {
    return this.col?.shared ?? false;
  }

  /**
   * Shared stores (Redis): takes in the recordings of `key` other writers made since this tape
   * opened; true when there are new ones. False at once for a store nobody else writes.
   */
  async refresh(key: string): Promise<boolean> {
    if (!this.col?.shared) return false;
    return (await this.col.refresh({ kind: 'mcp', key })) > 0;
  }

  /**
   * How many recordings a key has, and how many were served: to the session of `positions`
   * when given, else to anyone.
   *
   * @example
   * tape.count(key, session) // { recorded: 2, served: 1 }
   */
  count(key: string, positions?: McpPositions): { recorded: number; served: number } {
    const c = this.col?.count(key) ?? { recorded: 0, served: 0 };
    return positions ? { recorded: c.recorded, served: positions.get(key) ?? 0 } : c;
  }

  /**
   * Record mode: a live call of this run is to be stored under `key`. Its old recordings stay
   * on the tape until the new exchange is stored (it may never be: the store fails, the server
   * never answers), and until then they are in use, not stale (see close()).
   */
  ask(key: string): void {
    this.col?.ask(key);
  }

  /**
   * Closes as every session tape does, then counts among {@link used} the old recordings of the
   * calls this run made again whose new exchange was not stored: they stay on the tape as the
   * only answer of a call the client still makes, and a prune after the run must keep them.
   */
  override async close(opts: { abandon?: boolean } = {}): Promise<CloseReport> {
    const report = await super.close(opts);
    this.rerecorded = report.rerecorded ?? 0;
    for (const r of this.col?.keptAsked() ?? []) {
      try {
        this.used.add(mcpUsageMark(r.value() as McpRecord));
      } catch {
        // A damaged record: the run summary does not judge it either.
      }
    }
    return report;
  }

  /**
   * Appends a whole exchange. Resolves once it is stored, to undefined, or to why it could not
   * be (also warned about and counted in appendFailures); never rejects. `recorded` counts only
   * what was stored.
   */
  append(rec: McpRecord): Promise<string | undefined> {
    if (!this.col || !this.records) return Promise.resolve(undefined);
    return this.write(rec.key, rec, 'an MCP record').then(
      () => {
        this.recorded++;
        this.used.add(mcpUsageMark(rec));
        return undefined;
      },
      (e: unknown) => appendFailureCause(e),
    );
  }

  /**
   * The miss for a client message no recording answers: what differs from the closest
   * recording of the same call (the same method, and for a tool or a prompt the same name: a
   * call to another tool is no recording of this one), and how to record it. `scope`: the
   * session's number and server; only its recordings are looked at (another session's are never
   * served to it, so they are no clue).
   */
  miss(method: string, params: unknown, key: string, positions?: McpPositions, scope?: { session: number; server: string | undefined }): McpMiss {
    const label = callLabel(method, params);
    const got = keyParams(method, this.redactor.value(params), this.volatile);
    const { recorded, served } = this.count(key, positions);
    if (this.col && !this.col.exists) return this.missOf(method, params, key, `${label}: no tape at ${this.location}`);
    if (recorded > 0) return this.missOf(method, params, key, `${label} was called ${served + 1} times, recorded ${recorded}`);
    const name = nameOf(got);
    let best: { rec: McpRecord; n: number } | undefined;
    let total = 0;
    let sameMethod = 0;
    const otherNames = new Set<string>();
    let others = 0;
    for (const { value } of this.col?.entries() ?? []) {
      if (scope !== undefined) {
        const theirs = scopeOf(value);
        if (theirs.session !== scope.session || theirs.server !== scope.server) {
          others++;
          continue;
        }
      }
      total++;
      if (value.method !== method) continue;
      sameMethod++;
      const theirs = keyParams(method, value.request.params, this.volatile);
      if (name !== undefined && nameOf(theirs) !== name) {
        otherNames.add(String(nameOf(theirs)));
        continue;
      }
      const n = differenceCount(got, theirs);
      if (!best || n < best.n) best = { rec: value, n };
    }
    if (!best && sameMethod > 0) {
      // Another tool's arguments are no clue to this one's: name what the tape has instead.
      const names = [...otherNames].sort();
      const list = names.length > 5 ? `${names.slice(0, 5).join(', ')}, …` : names.join(', ');
      return this.missOf(method, params, key, `${label}: no recording of ${name} (${method} recorded: ${list})`);
    }
    if (!best && total === 0 && others > 0) {
      // Nothing of this session at all: its server was not recorded on this tape (another
      // server's sessions are there, and are never served to it).
      return this.missOf(method, params, key, `${label}: this session's server has no session on the tape (it holds ${others} recording${others === 1 ? '' : 's'} of other servers' or other sessions')`);
    }
    if (!best) return this.missOf(method, params, key, `${label}: no recording of ${method} (${total} recording${total === 1 ? '' : 's'} of other methods)`);
    const d = firstDifference(got, keyParams(method, best.rec.request.params, this.volatile));
    const at = d ? `params.${d.path}` : 'params';
    return this.missOf(
      method,
      params,
      key,
      `${label}: ${at} differs, ${shown(d?.got)} vs ${shown(d?.recorded)} in the closest recording`,
      `\n  closest recording: ${callLabel(best.rec.method, best.rec.request.params)}, recorded ${best.rec.recordedAt}, ${best.n} differing value${best.n === 1 ? '' : 's'}`,
    );
  }

  /**
   * A miss whose difference is known (`difference`: one line, the call's label first), worded and
   * counted as every miss, with how to re-record.
   *
   * @example
   * tape.missOf('tools/call', params, key, 'tools/call slow: recorded as cancelled by the client after 401 ms; …')
   */
  missOf(method: string, params: unknown, key: string, difference: string, detail = ''): McpMiss {
    const label = callLabel(method, params);
    const fix = this.opts.recordCommand ?? `re-record: npx llm-tapedeck mcp --tape ${this.location} --mode record -- <server command>`;
    // One line however long, as docs/mcp.md promises: a user copies the re-record command from it.
    const message = `${difference}; ${fix}`;
    const report = `tapedeck: MCP miss in ${this.location}: ${difference}${detail}\n  request: ${shown(this.redactor.value({ method, params }))}\n  key: ${key}\n  ${fix}`;
    const m = { method, label, message, report };
    this.misses.push(m);
    return m;
  }

  /** Whether the client's answer to a replayed server request is the recorded one (secrets masked alike). */
  sameAnswer(got: unknown, recorded: unknown): boolean {
    return hashValue(this.redactor.value(got) ?? null) === hashValue(recorded ?? null);
  }
}
