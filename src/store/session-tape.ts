/**
 * What the session engines' tapes (MCP exchanges, realtime sessions) share: a recording
 * collection of their record kind on any store, the mode's rules (serves, records), warnings
 * without a client to reach, and a close that waits for every append.
 */
import { TapedeckError } from '../errors.ts';
import type { RecordBackend, StoreWarning } from './backend.ts';
import { isBackend, storeBackend } from './backends/open.ts';
import { RecordCollection, type CloseReport, type RecordKind } from './collection.ts';
import { resolveModeWithSource, type TapeMode } from './mode.ts';
import { redactor, type RedactOptions, type Redactor } from './redact.ts';
import { checkRedactOptions } from './redact-options.ts';

/** Options every session tape takes. */
export interface SessionTapeOptions {
  /** Tape file path, `redis://` URL, or a store backend object. Required except in passthrough. */
  tape?: string | RecordBackend;
  /** replay | record | update | passthrough; default TAPEDECK_MODE, CACHE_MODE, else replay. */
  mode?: TapeMode | (string & {});
  /** Redaction rules, as for HTTP; `{ keepSecrets: true }` stores secrets as they are. */
  redact?: RedactOptions;
  /** fsync each batch of records (default true). */
  durable?: boolean;
  /** Problems that reach no client: failed appends, damaged records, cut sessions. */
  onWarning?: (message: string) => void;
  /**
   * The run this writer belongs to: writers of one run (the workers of one test run) never
   * replace each other's recordings in record mode. The test helpers set it.
   */
  run?: string;
  /**
   * The test this writer records and replays for, on a tape several tests share: its records
   * name the test, and a test is served its own recordings of a call, in the order it made them
   * (docs/vitest.md, "Tapes shared by tests"). The test helpers set it.
   */
  test?: string;
}

/**
 * The mode of a session tape's options, checked without opening anything: a mode that needs a
 * tape and has none is E_ARG with `example` as the fix.
 *
 * @example
 * sessionTapeMode({ mode: 'record' }, 'tapedeck serve --tape tapes/voice.tape') // throws E_ARG
 */
export function sessionTapeMode(opts: SessionTapeOptions, example: string): TapeMode {
  const { mode } = resolveModeWithSource(opts.mode);
  checkRedactOptions(opts.redact);
  if (mode !== 'passthrough' && !isBackend(opts.tape) && (typeof opts.tape !== 'string' || opts.tape === '')) {
    throw new TapedeckError('E_ARG', `Mode ${mode} needs a tape.`, { hint: `Give the tape path: ${example}.` });
  }
  return mode;
}

/**
 * Opens the collection of a session tape (none in passthrough): its mode (`once` decided), the
 * collection and where it is.
 *
 * @example
 * const { mode, col, location } = await openSessionCollection(opts, mcpRecords, 'tapedeck mcp --tape tapes/fs.tape -- <server>')
 */
export async function openSessionCollection<R>(opts: SessionTapeOptions, kind: RecordKind<R>, example: string): Promise<{ mode: TapeMode; col?: RecordCollection<R>; location: string }> {
  const mode = sessionTapeMode(opts, example);
  if (mode === 'passthrough') return { mode, location: typeof opts.tape === 'string' ? opts.tape : (opts.tape?.location ?? '(none)') };
  const backend = storeBackend(opts.tape!);
  const col = await RecordCollection.open(backend, { mode, kind, durable: opts.durable, ...(opts.run !== undefined ? { run: opts.run } : {}), ...(opts.test !== undefined ? { test: opts.test } : {}) });
  return { mode: col.mode, col, location: backend.location };
}

/**
 * Why an append failed, in one line: the error code when it has one, and its message.
 *
 * @example
 * appendFailureCause(new TapedeckError('E_TAPE_IO', 'disk full')) // 'E_TAPE_IO: disk full'
 */
export function appendFailureCause(e: unknown): string {
  return `${e instanceof TapedeckError ? `${e.code}: ` : ''}${e instanceof Error ? e.message : String(e)}`;
}

/**
 * @example
 * class VoiceTape extends SessionTape<RealtimeRecord> {}
 */
export abstract class SessionTape<R> {
  readonly mode: TapeMode;
  readonly redactor: Redactor;
  readonly location: string;
  /** Records that could not be stored. */
  appendFailures = 0;
  protected readonly col: RecordCollection<R> | undefined;
  private readonly writes = new Set<Promise<void>>();
  private readonly onWarning: ((message: string) => void) | undefined;
  private closing: Promise<CloseReport> | undefined;

  protected constructor(opts: SessionTapeOptions, opened: { mode: TapeMode; col?: RecordCollection<R>; location: string }) {
    this.mode = opened.mode;
    this.col = opened.col;
    this.location = opened.location;
    this.onWarning = opts.onWarning;
    // Masks that are not credentials are keyed under the store's salt, as the HTTP recordings'
    // are (src/store/redact.ts): without it every such secret was the same `[REDACTED]`.
    const salt = opened.col?.backend.salt;
    this.redactor = redactor(salt !== undefined ? { ...opts.redact, salt } : opts.redact);
    for (const w of this.col?.warnings ?? []) this.warn(`tapedeck: ${w.message}`);
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
    if (this.onWarning) this.onWarning(message);
    else process.stderr.write(`${message}\n`);
  }

  /**
   * Appends a record; resolves once durable. A failure is warned about (`what` names the
   * record) and rejects; it is counted in appendFailures.
   */
  protected write(key: string, rec: R, what: string): Promise<void> {
    if (!this.col || !this.records) return Promise.resolve();
    const p = this.col.append(key, rec).catch((e: unknown) => {
      this.appendFailures++;
      this.warn(`tapedeck: could not append ${what} to ${this.location}: ${appendFailureCause(e)}`);
      throw e;
    });
    this.writes.add(p);
    void p.catch(() => {}).finally(() => this.writes.delete(p));
    return p;
  }

  /** Resolves once every append so far is durable (or failed). */
  async flush(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /** Flushes and applies the mode's rule (record: re-recorded keys replace the old ones). Idempotent. */
  close(opts: { abandon?: boolean } = {}): Promise<CloseReport> {
    this.closing ??= (async () => {
      await this.flush();
      return (await this.col?.close(opts)) ?? { replaced: [], pruned: [] };
    })();
    return this.closing;
  }
}
