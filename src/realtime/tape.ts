/**
 * The recordings of realtime sessions on a tape (the same recording collection as HTTP and MCP,
 * records of kind `realtime`): the sessions of a connect are handed out in recorded order or by
 * the client's first frame (src/realtime/lineup.ts), each session is read whole from its parts,
 * and audio is stored once per distinct content.
 */
import { randomUUID } from 'node:crypto';
import { sha256 } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { REALTIME_RECORD_KIND, realtimeRecords, type RealtimeEnd, type RealtimeFrame, type RealtimePartRecord, type RealtimeRecord, type RealtimeSessionRecord } from '../store/records.ts';
import { openSessionCollection, SessionTape, type SessionTapeOptions } from '../store/session-tape.ts';
import type { CloseReport } from '../store/collection.ts';
import { REALTIME_PROTOCOLS } from '../providers/realtime.ts';
import { Lineup, type Slot, type Ticket } from './lineup.ts';
import { openingFirst } from './opening.ts';
import { noteSessionsUsed } from './prune.ts';
import { afterRecordRun, recordRunSessions } from './rerecord.ts';
import { decodedValues, realtimeUsageMark } from './usage-mark.ts';

/** Replay pacing: everything at once (default), as recorded, or a fixed gap in ms between frames. */
export type RealtimeTiming = 'none' | 'recorded' | number;

/** Version of the realtime key rules (docs/realtime.md, "Keys"); stored with each record. */
export const REALTIME_KEY_VERSION = 1;

/**
 * Options of RealtimeTape.open: the tape and its mode, strict order, redaction, the record command
 * misses show.
 */
export interface RealtimeTapeOptions extends SessionTapeOptions {
  /** Past the last recording of a connect, a further one is a miss (default: the last session again). */
  strictOrder?: boolean;
  /** How to record again, in the words of the entry point (shown with every miss). */
  recordCommand?: string;
}

/**
 * A session's place among the sessions of its open key, taken when its client connects (see
 * RealtimeTape.headTurn). Exactly one of append() and skip() takes effect; later calls do nothing.
 */
export interface HeadTurn {
  /** Appends the session's head once every session that connected before it under its key has appended its own or skipped. */
  append(head: Omit<RealtimeSessionRecord, 'v' | 'kind' | 'key' | 'keyVersion' | 'recordedAt' | 'role'>): Promise<void>;
  /** Gives the place up: this connect records no session (its upstream refused it, its client left). */
  skip(): void;
}

/** A recorded session, read whole. */
export interface LoadedSession {
  head: RealtimeSessionRecord;
  frames: RealtimeFrame[];
  /** How it ended; absent when the recorder died mid-session (replayed as a cut). */
  end?: RealtimeEnd;
  /** Why it ends early though it was recorded further: a part of it is damaged on the tape (replayed up to there, then cut). */
  damaged?: string;
}

/** One miss, as stats and the run summary show it. */
export interface RealtimeMiss {
  provider: string;
  message: string;
  report: string;
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/**
 * The digest audio and other binary content is stored under.
 *
 * @example
 * blobDigest(new Uint8Array([1, 2])) // 'a12871fee210fb8619291eaea194581cbd2531e4b23759d225f6806923f63222'
 */
export function blobDigest(bytes: Uint8Array): string {
  return hex(sha256(bytes));
}

/**
 * A tape of realtime sessions: what RealtimeEndpoint and the proxy record and replay a session's
 * frames with.
 *
 * @example
 * const tape = await RealtimeTape.open({ tape: 'tapes/voice.tape', mode: 'replay' })
 * const session = tape.nextSession(openKey)
 */
export class RealtimeTape extends SessionTape<RealtimeRecord> {
  readonly misses: RealtimeMiss[] = [];
  sessionsReplayed = 0;
  sessionsRecorded = 0;
  framesReplayed = 0;
  framesRecorded = 0;
  private readonly opts: RealtimeTapeOptions;
  private readonly blobsWritten = new Set<string>();
  private readonly blobCache = new Map<string, Uint8Array>();
  /** Sessions read so far, by their id. */
  private readonly loaded = new Map<string, LoadedSession>();
  /** Per connect key, the sessions read so far in recorded order and who has them (lineup()). */
  private readonly lineups = new Map<string, Lineup>();
  /** Per open key, the place of the last session that connected (headTurn): settled once it appended or skipped. */
  private readonly turns = new Map<string, Promise<void>>();
  /** The usage marks of the sessions recorded so far (see usedMarks). */
  private readonly recordedMarks = new Set<string>();
  /** The sessions recorded in this run (their sids). */
  private readonly recordedSids = new Set<string>();
  private closingTape: Promise<CloseReport> | undefined;

  private constructor(opts: RealtimeTapeOptions, opened: Awaited<ReturnType<typeof openSessionCollection<RealtimeRecord>>>) {
    super(opts, opened);
    this.opts = opts;
  }

  /** Opens the tape (created in record and update mode); a bad mode or no tape is a TapedeckError. */
  static async open(opts: RealtimeTapeOptions): Promise<RealtimeTape> {
    return new RealtimeTape(opts, await openSessionCollection(opts, realtimeRecords, 'tapedeck serve --tape tapes/voice.tape'));
  }

  /** How to record again, as every miss says it. */
  get recordCommand(): string {
    return this.opts.recordCommand ?? 're-record: restart tapedeck serve with --mode record';
  }

  /**
   * The sessions recorded under an open key as replay hands them out (src/realtime/lineup.ts),
   * read in recorded order as far as needed; undefined when the tape serves nothing.
   *
   * @example
   * const ticket = await tape.lineup(openKey)?.reserve()
   */
  lineup(key: string): Lineup | undefined {
    if (!this.col) return undefined;
    let l = this.lineups.get(key);
    if (!l) this.lineups.set(key, (l = new Lineup(() => this.readSlot(key))));
    return l;
  }

  /** Whether a connect past the last recording of its key is a miss (else it gets the last session again). */
  get strictOrder(): boolean {
    return this.opts.strictOrder === true;
  }

  /**
   * The next session recorded under an open key (k-th connect, k-th session), read whole; past
   * the last, the last again unless strictOrder. A damaged head is E_TAPE_DAMAGED (the connect
   * is never given another connect's session); a damaged part ends the session there, as a cut.
   */
  async nextSession(key: string): Promise<LoadedSession | undefined> {
    return (await this.nextPlace(key))?.session;
  }

  /**
   * nextSession(), with the session's place in the lineup (undefined for the last one again),
   * for a replay that gives it back if it misses.
   *
   * @example
   * const got = await tape.nextPlace(openKey) // { session, index: 0 }
   */
  async nextPlace(key: string): Promise<{ session: LoadedSession; index?: number } | undefined> {
    const l = this.lineup(key);
    if (!l) return undefined;
    const got = await l.nextPlace();
    if (got) return got;
    const again = await this.again(key);
    return again ? { session: again } : undefined;
  }

  /**
   * For a connect whose session is chosen at its first client frame after the session's opening
   * went out (OpenAI: `session.created`): a hold on the next session in recorded order, whose
   * opening it is sent; past the last, the last again (holding nothing) unless strictOrder.
   * Damage is thrown as nextSession's is.
   *
   * @example
   * const ticket = await tape.reserve(openKey) // ticket.session: the opening to send
   */
  async reserve(key: string): Promise<Ticket | undefined> {
    const l = this.lineup(key);
    if (!l) return undefined;
    const t = await l.reserve();
    if (t) return t;
    const last = await this.again(key);
    return last ? l.again(last) : undefined;
  }

  /**
   * The session for a connect whose first client frame chooses how it answers (Gemini's `setup`
   * names the model, which its URL does not): the first session of the connect not served yet
   * whose first client frame keys as `first`; past those, the last such session again unless
   * strictOrder. `matched: false` gives the session the miss is told against (the nearest by
   * `distance` from the connect's first frame: Lineup.toldAgainst), which stays unserved: a
   * connect that missed uses up no recording. `index`: the place of a session matched and not
   * served before (see Lineup.putBack). `replayed`: with strictOrder, the place of the first
   * session that does start with the frame, replayed already (the miss says so: re-recording
   * would not help).
   */
  async chooseSession(key: string, first: string, distance?: (s: LoadedSession) => number): Promise<{ session: LoadedSession; matched: boolean; index?: number; replayed?: number } | undefined> {
    const l = this.lineup(key);
    if (!l) return undefined;
    const got = await l.choose(first, () => true);
    if (got) return { session: got.session, matched: true, index: got.index };
    const starting = l.startingWith(first);
    const again = starting.at(-1);
    if (again) return this.strictOrder ? { session: again.session, matched: false, replayed: starting[0]!.index } : { session: again.session, matched: true };
    const told = l.toldAgainst(distance);
    return told ? { session: told, matched: false } : undefined;
  }

  /** Past the last recording of a key: the last one again (the collection's repeatLast, damage told), unless strictOrder. */
  private async again(key: string): Promise<LoadedSession | undefined> {
    if (this.strictOrder) return undefined;
    const head = this.col?.next(key, { repeatLast: true });
    return head?.role === 'session' ? this.read(head) : undefined;
  }

  /** The next session of `key` on the tape, read whole, or the error of its damaged head; undefined past the last. */
  private async readSlot(key: string): Promise<Slot | undefined> {
    let head: RealtimeRecord | undefined;
    try {
      head = await this.nextHead(key);
    } catch (e) {
      if (e instanceof TapedeckError) return { damaged: e };
      throw e;
    }
    return head?.role === 'session' ? { session: await this.read(head) } : undefined;
  }

  /** The next record of `key` not served yet, a shared store's new ones (other writers') included. */
  private async nextHead(key: string): Promise<RealtimeRecord | undefined> {
    const col = this.col!;
    const head = this.pastRemoved(() => col.next(key));
    return head ?? ((await this.refreshed(key)) ? this.pastRemoved(() => col.next(key)) : undefined);
  }

  /**
   * `next()`, past the places of sessions removed from a sound store. The heads of a connect are
   * numbered in recorded order, and the collection takes a head numbered past a missing one for
   * a recording lost to damage; but a connect's sessions are chosen by their first frames, not
   * by their turn, and a session removed by a prune of unused ones (`--prune-unused`,
   * TAPEDECK_PRUNE=1) leaves the ones recorded after it numbered so. They replay; a connect
   * that wanted the removed one misses, told what differs. Damage on the store is still told.
   */
  private pastRemoved(next: () => RealtimeRecord | undefined): RealtimeRecord | undefined {
    for (;;) {
      try {
        return next();
      } catch (e) {
        // `missing`: nothing on the store is damaged, a head is numbered past a removed one. Each
        // such throw passes one missing turn, so the loop ends at the head.
        if (!(e instanceof TapedeckError) || e.code !== 'E_TAPE_DAMAGED' || e.details.missing !== true) throw e;
      }
    }
  }

  /** Whether a shared store (Redis) has records of `key` other writers made since it was read. */
  private async refreshed(key: string): Promise<boolean> {
    const col = this.col;
    return col !== undefined && col.shared && (await col.refresh({ kind: REALTIME_RECORD_KIND, key }).catch(() => 0)) > 0;
  }

  /** A session read whole from its head: its parts and the audio they refer to. */
  private async read(head: RealtimeSessionRecord): Promise<LoadedSession> {
    const col = this.col!;
    const next = (k: string, repeatLast: boolean) => col.next(k, { repeatLast });
    // The same session served again (past the last recording of its connect): read once.
    const known = this.loaded.get(head.sid);
    if (known) return known;
    const frames: RealtimeFrame[] = [];
    let end: RealtimeEnd | undefined;
    let damaged: string | undefined;
    for (let n = 0; ; n++) {
      let part: RealtimeRecord | undefined;
      try {
        part = next(`${head.sid}/${n}`, true);
        if (!part && (await this.refreshed(`${head.sid}/${n}`))) part = next(`${head.sid}/${n}`, true);
      } catch (e) {
        if (!(e instanceof TapedeckError)) throw e;
        this.warn(`tapedeck: ${e.message}; the session is replayed up to there, then cut.`);
        end = { by: 'server', code: 1006, reason: '', cut: true };
        damaged = `${e.code}: ${e.message}`;
        break;
      }
      if (!part || part.role !== 'part') {
        // A later part on the tape: this one was lost to damage (skipped when the tape was read), not cut by the recording.
        damaged = this.lostPart(head.sid, n);
        break;
      }
      for (const f of part.frames) frames.push(f);
      if (part.end) {
        end = part.end;
        break;
      }
    }
    // The audio it refers to, read now (from other writers too), so replay reads it at once.
    for (const f of frames) {
      const digests = 'audio' in f ? [f.audio.blob] : 'blob' in f ? [f.blob] : 'blobs' in f ? (f.blobs ?? []) : [];
      for (const d of digests) {
        if (this.blobCache.has(d)) continue;
        let rec = next(`blob:${d}`, true);
        if (!rec && (await this.refreshed(`blob:${d}`))) rec = next(`blob:${d}`, true);
        if (rec?.role === 'blob') this.blobCache.set(d, rec.data);
      }
    }
    // The server's opening first, wherever a client that spoke at once put it (./opening.ts).
    const protocol = REALTIME_PROTOCOLS.find((p) => p.provider === head.provider);
    const session = { head, frames: openingFirst(protocol, frames), ...(end ? { end } : {}), ...(damaged ? { damaged } : {}) };
    this.loaded.set(head.sid, session);
    return session;
  }

  /** When part `n` of a session is missing but a later one is on the tape: what the damage is (E_TAPE_DAMAGED wording, with the damaged bytes the store skipped). */
  private lostPart(sid: string, n: number): string | undefined {
    const col = this.col!;
    let later: number | undefined;
    for (let k = n + 1; k <= n + 64 && later === undefined; k++) if (col.count(`${sid}/${k}`).recorded > 0) later = k;
    if (later === undefined) return undefined;
    const skipped = col.warnings.map((w) => w.message.replace(/\.$/, '')).filter((m) => /damaged/i.test(m));
    return `E_TAPE_DAMAGED: part ${n} of the session in ${this.location} is damaged (part ${later} is on the tape)${skipped.length > 0 ? `: ${skipped.join('; ')}` : ''}; \`${col.verifyCommand ?? `tapedeck verify ${this.location}`}\` lists the damage`;
  }

  /** The bytes stored under a digest; E_TAPE_DAMAGED when the tape lacks them. */
  blob(digest: string): Uint8Array {
    const cached = this.blobCache.get(digest);
    if (cached) return cached;
    const rec = this.col?.next(`blob:${digest}`, { repeatLast: true });
    if (!rec || rec.role !== 'blob') {
      throw new TapedeckError('E_TAPE_DAMAGED', `The audio ${digest.slice(0, 12)}... a session in ${this.location} refers to is not on the tape.`, {
        file: this.location,
        hint: `Record the session again (${this.recordCommand}); \`${this.col?.verifyCommand ?? `tapedeck verify ${this.location}`}\` lists damage.`,
      });
    }
    this.blobCache.set(digest, rec.data);
    return rec.data;
  }

  /** A new session id for the parts of a session being recorded. */
  newSid(): string {
    return randomUUID();
  }

  private base(key: string): { v: 1; kind: typeof REALTIME_RECORD_KIND; key: string; keyVersion: number; recordedAt: string } {
    return { v: 1, kind: REALTIME_RECORD_KIND, key, keyVersion: REALTIME_KEY_VERSION, recordedAt: new Date().toISOString() };
  }

  /** Appends the head of a session being recorded (its place among sessions of its key is taken now). */
  appendHead(key: string, head: Omit<RealtimeSessionRecord, 'v' | 'kind' | 'key' | 'keyVersion' | 'recordedAt' | 'role'>): Promise<void> {
    this.sessionsRecorded++;
    this.recordedMarks.add(realtimeUsageMark(head));
    this.recordedSids.add(head.sid);
    return this.write(key, { ...this.base(key), role: 'session', ...head }, 'a realtime session record');
  }

  /**
   * Takes the place of a session about to be recorded among the sessions of its open key, when
   * its client connects: its head is appended after those of the sessions that connected before
   * it, however late their upstream handshakes finish. Replay gives the k-th connect of a key
   * that starts alike the k-th such session, so sessions recorded at the same time must be stored in the order their
   * clients connected, which is the order the same code connects them in again; the order their
   * upstreams answered in changes from run to run.
   *
   * @example
   * const turn = tape.headTurn(openKey) // at connect
   * upstream.once('open', () => turn.append({ sid, provider, url, protocols }))
   * upstream.once('error', () => turn.skip())
   */
  headTurn(key: string): HeadTurn {
    const before = this.turns.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.turns.set(key, tail);
    void tail.then(() => {
      if (this.turns.get(key) === tail) this.turns.delete(key);
    });
    let taken = false;
    return {
      append: (head) => {
        if (taken) return Promise.resolve();
        taken = true;
        return before.then(() => this.appendHead(key, head)).finally(release);
      },
      skip: () => {
        if (taken) return;
        taken = true;
        release();
      },
    };
  }

  /**
   * A session recorded in this run, as a replay reads it from the tape: for the reconnect after
   * chaos's close cut the session while it was recorded (./live-cut.ts), which replays it in
   * any mode, record mode too (the tape serves nothing there), up to where it is recorded so far
   * (`end` undefined: it goes on live). `blobs`: the audio its frames refer to, kept at hand as
   * a read session's is.
   *
   * @example
   * const s = tape.recordedSession(openKey, { sid, provider, url, protocols }, frames, end, blobs)
   */
  recordedSession(key: string, head: Omit<RealtimeSessionRecord, 'v' | 'kind' | 'key' | 'keyVersion' | 'recordedAt' | 'role'>, frames: RealtimeFrame[], end: RealtimeEnd | undefined, blobs: ReadonlyMap<string, Uint8Array>): LoadedSession {
    for (const [d, bytes] of blobs) if (!this.blobCache.has(d)) this.blobCache.set(d, bytes);
    const session = { head: { ...this.base(key), role: 'session' as const, ...head }, frames, ...(end ? { end } : {}) };
    this.loaded.set(head.sid, session);
    return session;
  }

  /**
   * Counts a session used though no connect replays it now: chaos closed its replay halfway and
   * gave its place back for the reconnect (its frames went out, so a prune must keep it).
   *
   * @example
   * tape.markUsed(session.head)
   */
  markUsed(head: RealtimeSessionRecord): void {
    this.recordedMarks.add(realtimeUsageMark(head));
  }

  /** Appends audio bytes unless the tape has them already; returns their digest. */
  appendBlob(bytes: Uint8Array): string {
    const d = blobDigest(bytes);
    const key = `blob:${d}`;
    if (this.blobsWritten.has(d) || (this.col?.count(key).recorded ?? 0) > 0) return d;
    this.blobsWritten.add(d);
    void this.write(key, { ...this.base(key), role: 'blob', data: bytes }, 'realtime audio').catch(() => {});
    return d;
  }

  /** Appends frames of a session up to a completed response (or its end); resolves once durable. */
  appendPart(sid: string, n: number, frames: RealtimeFrame[], end?: RealtimeEnd): Promise<void> {
    const key = `${sid}/${n}`;
    this.framesRecorded += frames.length;
    const rec: RealtimePartRecord = { ...this.base(key), role: 'part', sid, n, frames, ...(end ? { end } : {}) };
    return this.write(key, rec, 'a realtime session part');
  }

  /** Every session on the tape, in order (for inspect, export, stats). */
  *sessions(): IterableIterator<RealtimeSessionRecord> {
    for (const { value } of this.col?.entries() ?? []) if (value.role === 'session') yield value;
  }

  /**
   * The recorded sessions' heads (what a connect that found no session is compared with):
   * read from the whole tape, so only on that miss.
   *
   * @example
   * tape.sessionHeads().filter((h) => h.url === stored)
   */
  sessionHeads(): RealtimeSessionRecord[] {
    const out: RealtimeSessionRecord[] = [];
    for (const { value } of this.col?.entries() ?? []) if (value.role === 'session') out.push(value);
    return out;
  }

  /**
   * The usage marks (`realtime <sid>`, the sid of a session's head record) of the sessions
   * recorded so far and of those replayed, not given back by a miss (a session that missed is as
   * unused as an HTTP recording no request matched): what a run summary counts as used, so a
   * prune after the run keeps them.
   *
   * @example
   * tape.usedMarks().has(`realtime ${head.sid}`) // true once the session replayed
   */
  usedMarks(): Set<string> {
    const out = new Set(this.recordedMarks);
    for (const l of this.lineups.values()) for (const p of l.places()) if (p.served) out.add(realtimeUsageMark(p.session.head));
    return out;
  }

  /**
   * Flushes and applies the mode's rule. In record mode, a session of this run replaces the old
   * sessions of its connect that sent the same client frames, and only those
   * (./rerecord.ts): the others stay. Idempotent.
   *
   * @example
   * await tape.close()
   */
  override close(opts: { abandon?: boolean } = {}): Promise<CloseReport> {
    this.closingTape ??= (async () => {
      await this.flush();
      // For `tapedeck serve --prune-unused`, which prunes at the proxy's close (./prune.ts).
      noteSessionsUsed(this.location, this.usedMarks());
      const sorted = this.mode === 'record' && this.col && this.recordedSids.size > 0 && opts.abandon !== true ? recordRunSessions(this.col.entries(), this.recordedSids) : undefined;
      // The sessions this run did not re-record stay in place as the key's recordings are
      // replaced: never removed and written back, which a crash in between would lose.
      for (const h of sorted?.kept ?? []) this.col!.reuse(h.head.key, h.k);
      const report = await super.close(opts);
      if (sorted && (sorted.kept.length > 0 || sorted.replaced.length > 0)) await this.keepOthers(sorted, report);
      return report;
    })();
    return this.closingTape;
  }

  /** After a record run's close: the old sessions it did not re-record written back, the parts and audio of those it did removed. */
  private async keepOthers(sorted: ReturnType<typeof recordRunSessions>, report: CloseReport): Promise<void> {
    let col: Awaited<ReturnType<typeof openSessionCollection<RealtimeRecord>>>['col'];
    try {
      // The run's own writer is closed: the tape is opened again to add (update mode replaces nothing).
      ({ col } = await openSessionCollection({ ...this.opts, mode: 'update' }, realtimeRecords, 'tapedeck serve --tape tapes/voice.tape'));
      if (!col) return;
      let restore: RealtimeSessionRecord[] = [];
      await col.rewrite((records) => {
        const values = decodedValues(records);
        const after = afterRecordRun(sorted, report, values);
        restore = after.restore;
        return after.remove;
      });
      for (const head of restore) await col.append(head.key, head);
      if (restore.length > 0) this.warn(`tapedeck: kept ${restore.length} realtime session(s) in ${this.location} that this record run did not re-record (other conversations on the same connect).`);
    } catch (e) {
      this.warn(`tapedeck: could not keep the realtime sessions this record run did not re-record in ${this.location}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      await col?.close();
    }
  }

  /** Notes a miss and returns it (the report goes to stderr by the caller). */
  miss(provider: string, message: string, report: string): RealtimeMiss {
    const m = { provider, message, report };
    this.misses.push(m);
    return m;
  }
}
