/**
 * The tape file backend: the framed msgpack file of docs/tape-format.md (src/store/tape-file.ts
 * does the bytes). Loading reads the file once and checks every frame's CRC without decoding:
 * a record is decoded the first time someone asks for its value, and its leading scalar fields
 * (the key an index needs) are read straight from the bytes.
 */
import { createHash } from 'node:crypto';
import { mkdir, unlink } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { TapedeckError } from '../../errors.ts';
import type { HeadScalar, LoadedRecord, LoadResult, RecordBackend, RecordTable, RewriteSelect, StoreWarning, WriterHandle } from '../backend.ts';
import { byProcess, interruptedRecordRuns, interruptedRunMessage, liveWriterHolds, openTapeWriter, tapeWritersOpen, unclosedRunMissNote, type WriterInfo } from '../tape-writers.ts';
import { type FileFrames, scanTapeFile } from '../tape-lazy.ts';
import { isRedactionSalt } from '../tape-codec.ts';
import { lookedAt, nearbyTape } from '../nearby-tape.ts';
import { saltForNewTape } from '../salt-group.ts';
import { appendRecords, createTape, decodeFrame, FRAME_HEADER_SIZE, payloadJson, payloadMember, peekPayload, removeDeadTempsSoon, rewriteTapeFrames, scanTape, syncDir, withTapeLock, type TapeLockOptions, type TapeScan } from '../tape-file.ts';
import { refuseUnregistered } from '../unregistered-type.ts';
import { refuseNonTapeFile, tapeTarget } from '../tape-target.ts';

/** Options of TapeBackend: how long it waits for the tape's lock. */
export interface TapeBackendOptions {
  /** Lock timing for appends and rewrites (src/store/tape-file.ts). */
  lock?: TapeLockOptions;
}

/**
 * What the records of one load read their bytes from, shared by all of them: the file image
 * (`bytes`), or for a large tape the open file (`source`, src/store/tape-lazy.ts).
 */
interface TapeImage {
  readonly bytes: Buffer | undefined;
  readonly source: FileFrames | undefined;
  readonly file: string;
}

/**
 * One frame of a tape image: decoded, peeked and digested on demand (one small object per
 * record; the scan's frame objects are not kept).
 */
class TapeRecord implements LoadedRecord {
  constructor(
    private readonly image: TapeImage,
    readonly at: number,
    private readonly length: number,
  ) {}
  head(fields?: readonly string[], deep?: boolean): Readonly<Record<string, HeadScalar>> {
    const { bytes, source } = this.image;
    if (bytes !== undefined) return peekPayload(bytes, this.at, this.length, fields, deep);
    return peekPayload(source!.read(this.at, this.length, false), source!.at, this.length, fields, deep);
  }
  value(): unknown {
    // Handed to the program: a value of a class it has not registered is E_TAPE_TYPE, not a stand-in.
    const { file } = this.image;
    return refuseUnregistered(() => decodeFrame(this.owned(), { offset: this.image.bytes !== undefined ? this.at : 0, length: this.length }, file), `${file}: the record at byte ${this.at}`, { file, offset: this.at });
  }
  member(name: string): unknown {
    return payloadMember(this.owned(), this.image.bytes !== undefined ? this.at : 0, this.length, name, this.image.file);
  }
  json(path: readonly string[]): Uint8Array | undefined {
    const { bytes, source } = this.image;
    if (bytes !== undefined) return payloadJson(bytes, this.at, this.length, path);
    // The frame's CRC checked as for a decode; the text is a copy, so the read window is not kept.
    return payloadJson(source!.read(this.at, this.length, true), source!.at, this.length, path);
  }
  /**
   * The payload's digest: stable when other writers append or rewrite (frames are copied
   * verbatim), equal only for equal bytes.
   */
  id(): string {
    const { bytes, source } = this.image;
    const b = bytes ?? source!.read(this.at, this.length, true);
    const at = bytes !== undefined ? this.at : source!.at;
    return createHash('sha256').update(b.subarray(at + FRAME_HEADER_SIZE, at + this.length)).digest('base64');
  }
  /** The bytes a decode reads: the image, or the frame's own copy (at 0) read from the file. */
  private owned(): Buffer {
    const { bytes, source } = this.image;
    if (bytes !== undefined) return bytes;
    const b = source!.read(this.at, this.length, true);
    return Buffer.from(b.subarray(source!.at, source!.at + this.length));
  }
}

/** The records of a tape read whole, sharing its file image. */
function records(scan: TapeScan, file: string): LoadedRecord[] {
  const image: TapeImage = { bytes: scan.bytes, source: undefined, file };
  return scan.frames.map((f) => new TapeRecord(image, f.offset, f.length));
}

/**
 * Tapes of at least this many bytes are read from their file as records are asked for instead
 * of held whole (src/store/tape-lazy.ts). Internal: tests lower it to take that path.
 */
export const lazyTape = { min: 4 << 20 };

/**
 * A RecordBackend in a tape file: appends durable once they resolve, readable after a crash
 * (docs/tape-format.md).
 *
 * @example
 * const backend = new TapeBackend('test/__tapes__/chat.tape');
 * const col = await RecordCollection.open(backend, { mode: 'update', kind: cacheRecords([]) });
 */
export class TapeBackend implements RecordBackend {
  readonly location: string;
  private readonly lock: TapeLockOptions;
  /** The file image of the last load, kept so the records it handed out can decode lazily. */
  bytes: Buffer | undefined;
  /** For a large tape instead: the open file the last load's records read from. */
  private source: FileFrames | undefined;
  salt: string | undefined;
  /** This writer's load created the file, and this writer appended nothing since. */
  private madeEmpty = false;

  /**
   * A missing tape whose path is a typo away from an existing one says so (see
   * ../nearby-tape.ts); one given as a relative path says the absolute path and the working
   * directory it was taken from; otherwise undefined, and messages say "no tape at <path>".
   */
  get absent(): string | undefined {
    const near = nearbyTape(this.path);
    const at = lookedAt(this.path);
    // The suggestion first: a miss's headline is clipped, and a long path would push it off.
    if (near !== undefined) return `did you mean ${relative(dirname(dirname(this.path)), near)}? no tape at ${at}`;
    return at === this.path ? undefined : `no tape at ${at}`;
  }

  constructor(
    readonly path: string,
    opts: TapeBackendOptions = {},
  ) {
    this.location = path;
    this.lock = opts.lock ?? {};
  }

  async load(opts: { create: boolean }): Promise<LoadResult> {
    // A device or FIFO at the path is refused before anything opens it or makes a tape of it.
    refuseNonTapeFile(this.path);
    if (opts.create) {
      await mkdir(dirname(this.path), { recursive: true });
      try {
        // A test's tape and its MCP tape are made with one salt (../salt-group.ts).
        await createTape(this.path, { salt: await saltForNewTape(this.path) });
        this.madeEmpty = true;
        // Made anew: a record run that ended without closing left nothing on it (the tape it
        // recorded to was deleted since), so there is nothing of it to warn about.
        this.ended = [];
      } catch (e) {
        // Another writer created it first: then we simply share it.
        if (!(e instanceof TapedeckError && e.code === 'E_TAPE_EXISTS')) throw e;
      }
    }
    // The last load's file is not closed here: records it handed out may still be read (it is
    // closed once they are unreachable, or at close()).
    const lazy = await scanTapeFile(this.path, lazyTape.min);
    if (lazy !== undefined) {
      // A sound large tape (damage takes the whole-file path below, which reports it); a tape
      // this writer created is never large.
      this.bytes = undefined;
      this.source = lazy.source;
      this.salt = isRedactionSalt(lazy.header.salt) ? lazy.header.salt : undefined;
      const image: TapeImage = { bytes: undefined, source: lazy.source, file: this.path };
      const { offsets, lengths } = lazy;
      // Records are made when asked for: a collection keeps their indexes (see RecordTable).
      const table: RecordTable = {
        length: offsets.length,
        record: (i) => new TapeRecord(image, offsets[i]!, lengths[i]!),
        at: (i) => offsets[i]!,
      };
      let list: LoadedRecord[] | undefined;
      const notes = await this.interrupted();
      const result: LoadResult = {
        exists: true,
        warnings: notes,
        get records(): LoadedRecord[] {
          return (list ??= Array.from({ length: table.length }, (_, i) => table.record(i)));
        },
      };
      // Not enumerable: a wrapper that copies the result ({ ...r, records: mine }) drops the
      // table with it, so the collection reads the wrapper's records, not these.
      Object.defineProperty(result, 'table', { value: table, enumerable: false });
      return result;
    }
    let scan: TapeScan;
    try {
      scan = await scanTape(this.path);
    } catch (e) {
      if (!opts.create && e instanceof TapedeckError && e.code === 'E_TAPE_NOT_FOUND') return { exists: false, records: [], warnings: [] };
      throw e;
    }
    let told = scan.warnings;
    // A reader (no writer of its own registered) of a tape a live writer holds: a half-written
    // record at the end is that writer's append in flight (it is read once complete), not a
    // crash's, which a user might prune while the writer still writes.
    if (this.ended === undefined && told.some((w) => w.code === 'E_TAPE_TORN_TAIL') && (await liveWriterHolds(this.path, this.lock.staleMs))) {
      told = told.filter((w) => w.code !== 'E_TAPE_TORN_TAIL');
    }
    const warnings = [...told.map((w) => tornRecordNamed(scan.bytes, w)), ...(await this.interrupted())];
    if (opts.create && scan.header.headerLost === true) {
      // A writer needs the tape's salt before its first record (masks are keyed under it), so
      // a lost header (a 0-byte file, damage) is replaced now, keeping every record, rather
      // than at the first append. The damage stays reported.
      await rewriteTapeFrames(this.path, () => [], this.lock);
      scan = await scanTape(this.path);
    }
    this.bytes = scan.bytes;
    this.source = undefined;
    this.salt = isRedactionSalt(scan.header.salt) ? scan.header.salt : undefined;
    return { exists: true, records: records(scan, this.path), warnings };
  }

  async append(values: readonly unknown[], opts: { durable: boolean }): Promise<void> {
    this.madeEmpty = false;
    // With the salt its masks were made under: a tape replaced by another since the load (its
    // own salt) is refused (E_TAPE_CHANGED), not given records that never match there. A
    // backend that never loaded the tape masked nothing under any salt: nothing to compare.
    const salt = this.bytes === undefined && this.source === undefined ? undefined : (this.salt ?? null);
    try {
      await appendRecords(this.path, values as unknown[], { ...this.lock, durable: opts.durable, salt });
    } catch (e) {
      // The writer that made the tape removed it, empty, as it closed (see close()) after this
      // one had loaded it: made again with the salt this writer keys its masks under, which is
      // the same empty tape, then appended to. Made again meanwhile by another: its salt must be
      // this one's.
      if (!(e instanceof TapedeckError && e.code === 'E_TAPE_NOT_FOUND') || (this.bytes === undefined && this.source === undefined)) throw e;
      await createTape(this.path, { salt: this.salt ?? null }).catch((c: unknown) => {
        if (!(c instanceof TapedeckError && c.code === 'E_TAPE_EXISTS')) throw c;
      });
      const again = await scanTape(this.path);
      const salt = isRedactionSalt(again.header.salt) ? again.header.salt : undefined;
      if (salt !== this.salt) {
        throw new TapedeckError('E_TAPE_IO', `Tape ${this.path} was removed and made again by another writer while this one had it open; nothing was appended.`, {
          file: this.path,
          hint: 'Record again: the next run opens the tape as it is now.',
        });
      }
      await appendRecords(this.path, values as unknown[], { ...this.lock, durable: opts.durable, salt });
    }
  }

  async rewrite(select: RewriteSelect): Promise<{ kept: number; removed: unknown[]; warnings: StoreWarning[] }> {
    const r = await rewriteTapeFrames(this.path, (scan) => select(records(scan, this.path)), this.lock);
    return { kept: r.kept, removed: r.dropped, warnings: r.warnings };
  }

  async openWriter(run: string, mode?: 'record' | 'update'): Promise<WriterHandle> {
    this.ended = [];
    // A rewrite or an import of this tape killed midway left its temp file beside it: gone once
    // its process is (a killed rewrite's lock is taken over first, as any writer takes it over).
    await removeDeadTempsSoon(this.path, this.lock);
    return openTapeWriter(this.path, run, this.lock.staleMs, mode, this.ended);
  }

  /**
   * Registrations of writers that had ended, removed as this writer registered (undefined: no
   * writer registered, so load() reads them itself without removing them).
   */
  private ended: WriterInfo[] | undefined;

  /** See RecordBackend.missNote: record runs that ended without closing the tape, as a reader found them at load. */
  missNote: string | undefined;

  /** Notes for record runs that ended without closing the tape (see interruptedRecordRuns). */
  private async interrupted(): Promise<StoreWarning[]> {
    const unclosed: WriterInfo[] = [];
    const runs = this.ended ? this.ended.filter((w) => w.mode === 'record') : await interruptedRecordRuns(this.path, this.lock.staleMs, unclosed);
    this.ended = undefined;
    this.missNote = unclosed.length > 0 ? unclosedRunMissNote(this.path, unclosed) : undefined;
    return byProcess(runs).map((ws) => ({ code: 'TAPEDECK_INTERRUPTED_RUN', offset: 0, message: interruptedRunMessage(this.path, ws) }));
  }

  /**
   * A tape this writer made and never appended to is removed again, so a run that recorded
   * nothing (every request answered, or none could be recorded) leaves no empty file behind to
   * commit. Only while it holds no record and no other writer has it open (writers register
   * before they load: one that opens later makes it anew), under the tape's lock.
   */
  async close(): Promise<void> {
    this.bytes = undefined;
    this.source?.close();
    this.source = undefined;
    if (!this.madeEmpty) return;
    this.madeEmpty = false;
    await withTapeLock(this.path, async () => {
      if (await tapeWritersOpen(this.path)) return;
      const scan = await scanTape(this.path).catch(() => undefined);
      // A header and nothing after it (bytes past it would be a frame or a warning).
      if (scan === undefined || scan.frames.length > 0 || scan.warnings.length > 0 || scan.header.headerLost === true) return;
      // The file, not a symbolic link to it: a link to a tape not recorded yet stays one.
      const file = tapeTarget(this.path);
      await unlink(file);
      await syncDir(dirname(file));
    }, this.lock).catch(() => {
      // Left as it is: an empty tape, as before.
    });
  }
}

/**
 * A torn tail with the record it was, when its leading fields (`kind`, `key`) reached the disk:
 * only the call that record answered gets E_TAPE_DAMAGED (the collection's lost accounting),
 * not every call past the last recording of its own request.
 */
function tornRecordNamed(bytes: Buffer, w: StoreWarning): StoreWarning {
  if (w.code !== 'E_TAPE_TORN_TAIL' || w.record !== undefined || w.offset < 0 || w.offset >= bytes.length) return w;
  let head: Record<string, unknown>;
  try {
    head = peekPayload(bytes, w.offset, bytes.length - w.offset, TORN_FIELDS);
  } catch {
    return w;
  }
  return typeof head.key === 'string' ? { ...w, record: { kind: typeof head.kind === 'string' ? head.kind : 'cache', key: head.key } } : w;
}

const TORN_FIELDS: readonly string[] = ['kind', 'key'];
