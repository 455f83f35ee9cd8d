/**
 * An MCP tape: MCP exchange records in the one recording collection (any backend: tape file,
 * Redis, memory), the mode, the redactor, the counters and the misses. Transports (stdio,
 * Streamable HTTP, an SDK transport) share it through McpSession (session.ts).
 */
import { hashValue } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import type { RecordBackend, StoreWarning } from '../store/backend.ts';
import { isBackend, storeBackend } from '../store/backends/open.ts';
import { RecordCollection, type CloseReport, type RecordKind } from '../store/collection.ts';
import { resolveModeWithSource, type TapeMode } from '../store/mode.ts';
import { MCP_RECORD_KIND, mcpRecords, type McpRecord } from '../store/records.ts';
import { redactor, type RedactOptions, type Redactor } from '../store/redact.ts';
import { differenceCount, firstDifference, keyParams, mcpRecordKeys } from './key.ts';

/** Options of an MCP tape, shared by every entry point. */
export interface McpTapeOptions {
  /** Tape file path, `redis://` URL, or a store backend object. Required except in passthrough. */
  tape?: string | RecordBackend;
  /** replay | record | update | passthrough; default TAPEDECK_MODE, CACHE_MODE, else replay. */
  mode?: TapeMode | (string & {});
  /** Past the last recording of a call, a further identical call is a miss (default: the last answer again). */
  strictOrder?: boolean;
  /** Redaction rules, as for HTTP; `{ keepSecrets: true }` stores secrets as they are. */
  redact?: RedactOptions;
  /** fsync each batch of records (default true). */
  durable?: boolean;
  /** How to record again, in the words of the entry point (shown with every miss). */
  recordCommand?: string;
  /** Problems that reach no client: failed appends, damaged records, cut exchanges. */
  onWarning?: (message: string) => void;
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

export class McpTape {
  readonly mode: TapeMode;
  readonly redactor: Redactor;
  readonly location: string;
  readonly misses: McpMiss[] = [];
  hits = 0;
  /** Exchanges stored (counted once they are). */
  recorded = 0;
  /** Exchanges that could not be stored (a request among them was answered with error -32054). */
  appendFailures = 0;
  private readonly col: RecordCollection<McpRecord> | undefined;
  private readonly writes = new Set<Promise<unknown>>();
  private readonly opts: McpTapeOptions;
  private closing: Promise<CloseReport> | undefined;

  private constructor(opts: McpTapeOptions, mode: TapeMode, col: RecordCollection<McpRecord> | undefined, location: string) {
    this.opts = opts;
    this.mode = mode;
    this.col = col;
    this.location = location;
    this.redactor = redactor(opts.redact);
  }

  /**
   * Opens the tape (created in record and update mode). A bad mode or a missing tape option is
   * a TapedeckError before anything runs.
   */
  static async open(opts: McpTapeOptions): Promise<McpTape> {
    const mode = McpTape.check(opts);
    if (mode === 'passthrough') return new McpTape(opts, mode, undefined, typeof opts.tape === 'string' ? opts.tape : opts.tape?.location ?? '(none)');
    const backend = storeBackend(opts.tape!);
    const col = await RecordCollection.open(backend, { mode, kind: MCP_KIND, durable: opts.durable });
    // `once` is record or replay, as the collection decided from whether the tape exists.
    const tape = new McpTape(opts, col.mode, col, backend.location);
    for (const w of col.warnings) tape.warn(`tapedeck: ${w.message}`);
    return tape;
  }

  /** Resolves the mode and checks the options without opening anything. */
  static check(opts: McpTapeOptions): TapeMode {
    const { mode } = resolveModeWithSource(opts.mode);
    if (mode !== 'passthrough' && !isBackend(opts.tape) && (typeof opts.tape !== 'string' || opts.tape === '')) {
      throw new TapedeckError('E_ARG', `Mode ${mode} needs a tape.`, { hint: 'Give the tape path: tapedeck mcp --tape tapes/server.tape -- <server command>.' });
    }
    return mode;
  }

  /** Whether this mode answers from the tape (replay, update). */
  get serves(): boolean {
    return this.mode === 'replay' || this.mode === 'update';
  }

  /** Whether this mode writes (record, update). */
  get records(): boolean {
    return this.mode === 'record' || this.mode === 'update';
  }

  /** Whether the tape existed at open (a replay of a tape never recorded misses everything). */
  get exists(): boolean {
    return this.col?.exists ?? false;
  }

  get warnings(): readonly StoreWarning[] {
    return this.col?.warnings ?? [];
  }

  warn(message: string): void {
    if (this.opts.onWarning) this.opts.onWarning(message);
    else process.stderr.write(`${message}\n`);
  }

  /**
   * The next recording of a key (k-th call, k-th recording); past the last, the last again
   * unless strictOrder (or `once`).
   */
  next(key: string, once = false): McpRecord | undefined {
    return this.col?.next(key, { repeatLast: !once && this.opts.strictOrder !== true });
  }

  /**
   * Shared stores (Redis): takes in the recordings of `key` other writers made since this tape
   * opened; true when there are new ones. False at once for a store nobody else writes.
   */
  async refresh(key: string): Promise<boolean> {
    if (!this.col?.shared) return false;
    return (await this.col.refresh({ kind: 'mcp', key })) > 0;
  }

  /** How many recordings a key has and how many were served. */
  count(key: string): { recorded: number; served: number } {
    return this.col?.count(key) ?? { recorded: 0, served: 0 };
  }

  /**
   * Appends a whole exchange. Resolves once it is stored, to undefined, or to why it could not
   * be (also warned about and counted in appendFailures); never rejects. `recorded` counts only
   * what was stored.
   */
  append(rec: McpRecord): Promise<string | undefined> {
    if (!this.col || !this.records) return Promise.resolve(undefined);
    const p = this.col.append(rec.key, rec).then(
      () => {
        this.recorded++;
        return undefined;
      },
      (e: unknown) => {
        this.appendFailures++;
        const cause = `${e instanceof TapedeckError ? `${e.code}: ` : ''}${e instanceof Error ? e.message : String(e)}`;
        this.warn(`tapedeck: could not append an MCP record to ${this.location}: ${cause}`);
        return cause;
      },
    );
    this.writes.add(p);
    void p.finally(() => this.writes.delete(p));
    return p;
  }

  /**
   * The miss for a client message no recording answers: what differs from the closest
   * recording of the same method (first differing argument), and how to record it.
   */
  miss(method: string, params: unknown, key: string): McpMiss {
    const label = callLabel(method, params);
    const fix = this.opts.recordCommand ?? `re-record: npx llm-tapedeck mcp --tape ${this.location} --mode record -- <server command>`;
    const got = keyParams(method, this.redactor.value(params));
    let difference: string;
    let detail = '';
    const { recorded, served } = this.count(key);
    if (this.col && !this.col.exists) difference = `${label}: no tape at ${this.location}`;
    else if (recorded > 0) difference = `${label} was called ${served + 1} times, recorded ${recorded}`;
    else {
      let best: { rec: McpRecord; n: number } | undefined;
      let total = 0;
      for (const { value } of this.col?.entries() ?? []) {
        total++;
        if (value.method !== method) continue;
        const n = differenceCount(got, keyParams(method, value.request.params));
        if (!best || n < best.n) best = { rec: value, n };
      }
      if (!best) difference = `${label}: no recording of ${method} (${total} recording${total === 1 ? '' : 's'} of other methods)`;
      else {
        const d = firstDifference(got, keyParams(method, best.rec.request.params));
        const at = d ? `params.${d.path}` : 'params';
        difference = `${label}: ${at} differs, ${shown(d?.got)} vs ${shown(d?.recorded)} in the closest recording`;
        detail = `\n  closest recording: ${callLabel(best.rec.method, best.rec.request.params)}, recorded ${best.rec.recordedAt}, ${best.n} differing value${best.n === 1 ? '' : 's'}`;
      }
    }
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

  /** Resolves once every append so far is durable (or failed). */
  async flush(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  /** Flushes and applies the mode's rule (record: re-recorded calls replace the old ones). Idempotent. */
  close(opts: { abandon?: boolean } = {}): Promise<CloseReport> {
    this.closing ??= (async () => {
      await this.flush();
      return (await this.col?.close(opts)) ?? { replaced: [], pruned: [] };
    })();
    return this.closing;
  }
}
